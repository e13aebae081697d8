"""The learner image's health probe (leangrpo_learner.health_probe) against a learner that speaks
TLS, as a Kubernetes exec probe runs it: dialling 127.0.0.1, checking the certificate for the
Service's name against the CA file. A plain-text probe, the wrong name or no CA fail."""
import subprocess
import sys

import pytest

from conftest import PACKAGE_ROOT
from leangrpo_learner.health_probe import main as probe
from server_process import LearnerProcess


def issue_certificate(directory, names):
    """A CA and a server certificate it signs for `names`, with openssl (as deploy/k8s/make-tls-secret.sh does)."""

    def openssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test CA", "-keyout", directory / "ca.key", "-out", directory / "ca.crt"
    )
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={names[0]}", "-keyout", directory / "tls.key", "-out", directory / "tls.csr")
    (directory / "ext").write_text("subjectAltName=" + ",".join(f"DNS:{n}" for n in names) + "\nextendedKeyUsage=serverAuth\n")
    openssl(
        "x509", "-req", "-in", directory / "tls.csr", "-CA", directory / "ca.crt", "-CAkey", directory / "ca.key", "-CAcreateserial",
        "-days", "1", "-extfile", directory / "ext", "-out", directory / "tls.crt",
    )  # fmt: skip


@pytest.fixture(scope="module")
def tls_learner(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    issue_certificate(directory, ["learner", "learner.lean-grpo.svc"])
    learner = LearnerProcess({"server": {"tls": {"cert_file": str(directory / "tls.crt"), "key_file": str(directory / "tls.key")}}})
    yield learner, directory
    assert learner.stop() == 0


def test_serving_over_tls_for_the_services_name(tls_learner, capsys):
    learner, directory = tls_learner
    address = f"https://{learner.address}"
    ca = str(directory / "ca.crt")
    assert probe([address, "--ca", ca, "--server-name", "learner"]) == 0
    assert probe([address, "leangrpo.v1.LearnerService", "--ca", ca, "--server-name", "learner.lean-grpo.svc"]) == 0
    assert capsys.readouterr().out == "SERVING\nSERVING\n"


def test_fails_without_trust_or_in_plain_text(tls_learner, capsys):
    learner, directory = tls_learner
    ca = str(directory / "ca.crt")
    assert probe([f"https://{learner.address}", "--ca", ca, "--server-name", "verifier"]) == 1
    assert probe([f"https://{learner.address}", "--server-name", "learner"]) == 1
    assert probe([learner.address]) == 1
    assert probe([f"https://{learner.address}", "leangrpo.v1.NoSuchService", "--ca", ca, "--server-name", "learner"]) == 1
    assert capsys.readouterr().err.count("health check of") == 4


def test_usage_errors_exit_2(tls_learner, capsys):
    learner, directory = tls_learner
    assert probe([learner.address, "--ca", str(directory / "ca.crt")]) == 2
    assert f"give the address as https://{learner.address}" in capsys.readouterr().err
    assert probe([f"https://{learner.address}", "--ca", str(directory / "absent.crt")]) == 2
    assert "cannot read --ca" in capsys.readouterr().err
    assert probe([f"grpc://{learner.address}"]) == 2


def test_runs_as_a_module_without_torch():
    """The probe is what an exec probe runs: a fresh interpreter, importing no torch (seconds count)."""
    code = "import sys, runpy; sys.argv = ['x', '--help']; runpy.run_module('leangrpo_learner.health_probe', run_name='__main__')"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=PACKAGE_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "usage: health_probe" in done.stdout
    assert " torch" not in done.stderr
