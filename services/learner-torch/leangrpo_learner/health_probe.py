"""`python -m leangrpo_learner.health_probe ADDRESS [SERVICE] [--ca FILE] [--server-name NAME]`

The learner image's health probe (Docker HEALTHCHECK, Kubernetes exec probes where the learner
speaks TLS, which Kubernetes' native grpc probe cannot), with the TypeScript images' probe's usage
(packages/kit/src/bin/health-probe.ts): a grpc.health.v1.Health/Check of SERVICE ("" for the
server as a whole); exit 0 when SERVING, 1 otherwise, 2 on a usage error. ADDRESS is HOST:PORT or
http://HOST:PORT (plain text), or https://HOST:PORT (TLS: the certificate checked against FILE's
authorities, default the system's, and for NAME, default HOST). Needs grpcio and protobuf only."""
from __future__ import annotations

import argparse
import sys

import grpc

from . import proto


class UsageError(Exception):
    pass


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="health_probe", description="gRPC health probe")
    parser.add_argument("address", help="HOST:PORT, http://HOST:PORT or https://HOST:PORT")
    parser.add_argument("service", nargs="?", default="", help='the service asked about ("" for the server)')
    parser.add_argument("--ca", help="PEM file of the certificate authorities trusted (TLS)")
    parser.add_argument("--server-name", help="the name the certificate is checked for (TLS; default HOST)")
    args = parser.parse_args(argv)
    scheme, _, rest = args.address.rpartition("://")
    if scheme not in ("", "http", "https"):
        raise UsageError(f'address "{args.address}" must be HOST:PORT, http://HOST:PORT or https://HOST:PORT')
    args.target = rest
    args.tls = scheme == "https"
    if not args.tls and (args.ca is not None or args.server_name is not None):
        raise UsageError(f"--ca and --server-name apply to TLS: give the address as https://{rest}")
    return args


def open_channel(args: argparse.Namespace) -> grpc.Channel:
    if not args.tls:
        return grpc.insecure_channel(args.target)
    root = None
    if args.ca is not None:
        try:
            with open(args.ca, "rb") as file:
                root = file.read()
        except OSError as error:
            raise UsageError(f"cannot read --ca {args.ca} ({error.strerror})") from None
    options = [("grpc.ssl_target_name_override", args.server_name)] if args.server_name else []
    return grpc.secure_channel(args.target, grpc.ssl_channel_credentials(root_certificates=root), options=options)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        channel = open_channel(args)
    except UsageError as error:
        print(f"health_probe: {error}", file=sys.stderr)
        return 2
    request_class = proto.message("grpc.health.v1.HealthCheckRequest")
    response_class = proto.message("grpc.health.v1.HealthCheckResponse")
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check", request_serializer=lambda m: m.SerializeToString(), response_deserializer=response_class.FromString
    )
    try:
        response = check(request_class(service=args.service), timeout=3)
    except grpc.RpcError as error:
        print(f"health check of {args.address} failed: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    finally:
        channel.close()
    status = response_class.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number[response.status].name
    print(status)
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
