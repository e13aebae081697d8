"""The learner over TLS, as the TypeScript services serve it: server.tls.cert_file and key_file
(PEM) on the one port, a client that trusts the certificate calls it (the token rides inside
TLS), a client that does not, or that speaks plain text, gets nothing; beyond loopback the
learner does not start without TLS unless server.allow_plaintext says the network encrypts, and
a certificate it cannot use stops it before the model loads, naming the key."""
import json
import os
import subprocess
import sys

import grpc
import pytest

from conftest import PACKAGE_ROOT
from leangrpo_learner import proto
from server_process import LearnerProcess

M = proto.message
TOKEN = "tls-t0ken"


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    files = {}
    for name, names in [("learner", "DNS:localhost,IP:127.0.0.1"), ("stranger", "DNS:localhost")]:
        cert, key = directory / f"{name}.crt", directory / f"{name}.key"
        openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
            "-addext", f"subjectAltName={names}", "-keyout", str(key), "-out", str(cert),
        )  # fmt: skip
        files[name] = (str(cert), str(key))
    encrypted = directory / "encrypted.key"
    openssl("pkey", "-in", files["learner"][1], "-aes256", "-passout", "pass:secret", "-out", str(encrypted))
    files["encrypted"] = str(encrypted)
    return directory, files


def trusting(cert_file: str):
    with open(cert_file, "rb") as file:
        return grpc.ssl_channel_credentials(root_certificates=file.read())


def tls_section(files) -> dict:
    cert, key = files["learner"]
    return {"tls": {"cert_file": cert, "key_file": key}}


def health(channel, timeout=10):
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=M("grpc.health.v1.HealthCheckResponse").FromString,
    )
    return check(M("grpc.health.v1.HealthCheckRequest")(service=""), timeout=timeout)


def get_status(channel, token=None):
    call = channel.unary_unary(
        "/leangrpo.v1.LearnerService/GetStatus",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=M("leangrpo.v1.GetStatusResponse").FromString,
    )
    metadata = [("authorization", f"Bearer {token}")] if token else None
    return call(M("leangrpo.v1.GetStatusRequest")(), timeout=10, metadata=metadata)


def rpc_code(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code()


def test_beyond_loopback_over_tls_a_client_that_trusts_the_certificate_is_answered(certificates):
    _, files = certificates
    learner = LearnerProcess({"server": tls_section(files)}, host="0.0.0.0", env={"LEANGRPO_AUTH_TOKEN": TOKEN}, credentials=trusting(files["learner"][0]))
    port = learner.address.rsplit(":", 1)[1]
    plain = grpc.insecure_channel(f"127.0.0.1:{port}")
    stranger = grpc.secure_channel(f"localhost:{port}", trusting(files["stranger"][0]))
    try:
        assert health(learner.channel).status == 1
        assert get_status(learner.channel, TOKEN).step == 0
        assert rpc_code(lambda: get_status(learner.channel)) == grpc.StatusCode.UNAUTHENTICATED
        # Plain text to the TLS port, and TLS that trusts another certificate: no answer at all.
        assert rpc_code(lambda: health(plain, timeout=3)) == grpc.StatusCode.UNAVAILABLE
        assert rpc_code(lambda: health(stranger, timeout=3)) == grpc.StatusCode.UNAVAILABLE
    finally:
        plain.close()
        stranger.close()
        assert learner.stop() == 0


def test_beyond_loopback_allow_plaintext_serves_plain_text_and_says_so(certificates):
    learner = LearnerProcess({"server": {"allow_plaintext": True}}, host="0.0.0.0", env={"LEANGRPO_AUTH_TOKEN": TOKEN})
    try:
        assert get_status(learner.channel, TOKEN).step == 0
    finally:
        assert learner.stop() == 0
    assert "serving without TLS beyond loopback (server.allow_plaintext): the bearer token crosses the network in clear text" in learner.process.stderr.read()


def refused(config: dict, host="0.0.0.0") -> str:
    """The learner started as a process that must not start: exit 2, and what it said."""
    command = [sys.executable, "-m", "leangrpo_learner", "serve", "--port", "0", "--host", host, "--config-json", json.dumps(config)]
    env = {**os.environ, "LEANGRPO_AUTH_TOKEN": TOKEN, "PYTHONPATH": str(PACKAGE_ROOT)}
    result = subprocess.run(command, cwd=PACKAGE_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    return result.stderr


def test_beyond_loopback_without_tls_or_allow_plaintext_the_learner_does_not_start():
    message = refused({})
    assert message.startswith('leangrpo_learner: server.host "0.0.0.0" is beyond loopback without TLS, so the token would cross the network in clear text')
    for key in ("server.tls.cert_file", "server.tls.key_file", "server.allow_plaintext: true"):
        assert key in message
    assert "IP:" not in message and "openssl req -x509" in message


def test_a_certificate_the_learner_cannot_use_stops_it_naming_the_key(certificates):
    directory, files = certificates
    cert, key = files["learner"]
    missing = refused({"server": {"tls": {"cert_file": str(directory / "absent.crt"), "key_file": key}}})
    assert f'config key "server.tls.cert_file" names {directory / "absent.crt"}, which cannot be read (No such file or directory)' in missing
    # Another certificate's key, the certificate given as its own key, a key encrypted with a passphrase.
    mismatched = refused({"server": {"tls": {"cert_file": cert, "key_file": files["stranger"][1]}}}, host="127.0.0.1")
    assert "must be a PEM certificate chain and its private key: key values mismatch" in mismatched
    not_a_key = refused({"server": {"tls": {"cert_file": cert, "key_file": cert}}}, host="127.0.0.1")
    assert "must be a PEM certificate chain and its private key" in not_a_key
    encrypted = refused({"server": {"tls": {"cert_file": cert, "key_file": files["encrypted"]}}}, host="127.0.0.1")
    assert f'config key "server.tls.key_file" ({files["encrypted"]}) is encrypted; give the key unencrypted' in encrypted
