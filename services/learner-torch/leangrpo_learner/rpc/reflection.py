"""Server reflection (grpc.reflection.v1 and v1alpha), answered from the descriptor set, so
grpcurl and buf curl can list and call the services."""
from __future__ import annotations

import grpc

from .. import proto

NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
UNIMPLEMENTED = grpc.StatusCode.UNIMPLEMENTED.value[0]


class Reflection:
    def __init__(self, services: list[str]):
        self.services = services
        self.files = {f.name: f for f in proto.file_set().file}

    def _with_dependencies(self, name: str) -> list[bytes]:
        ordered, seen = [], set()

        def visit(file_name: str) -> None:
            if file_name in seen or file_name not in self.files:
                return
            seen.add(file_name)
            ordered.append(self.files[file_name].SerializeToString())
            for dep in self.files[file_name].dependency:
                visit(dep)

        visit(name)
        return ordered

    def _answer(self, package: str, request):
        Response = proto.message(f"{package}.ServerReflectionResponse")
        response = Response(valid_host=request.host, original_request=request)
        kind = request.WhichOneof("message_request")
        try:
            if kind == "list_services":
                for name in self.services:
                    response.list_services_response.service.add(name=name)
            elif kind == "file_by_filename":
                if request.file_by_filename not in self.files:
                    raise KeyError(request.file_by_filename)
                response.file_descriptor_response.file_descriptor_proto.extend(self._with_dependencies(request.file_by_filename))
            elif kind == "file_containing_symbol":
                symbol = request.file_containing_symbol
                found = proto.pool().FindFileContainingSymbol(symbol)
                response.file_descriptor_response.file_descriptor_proto.extend(self._with_dependencies(found.name))
            elif kind == "all_extension_numbers_of_type":
                proto.pool().FindMessageTypeByName(request.all_extension_numbers_of_type)
                response.all_extension_numbers_response.base_type_name = request.all_extension_numbers_of_type
            else:
                response.error_response.error_code = UNIMPLEMENTED
                response.error_response.error_message = f"{kind} is not supported"
        except KeyError as error:
            response.ClearField("message_response")
            response.error_response.error_code = NOT_FOUND
            response.error_response.error_message = f"not found: {error.args[0] if error.args else kind}"
        return response

    def handler(self, package: str, budget) -> grpc.GenericRpcHandler:
        Request = proto.message(f"{package}.ServerReflectionRequest")
        Response = proto.message(f"{package}.ServerReflectionResponse")

        def info(requests, context):
            for request in requests:
                yield self._answer(package, request)

        return grpc.method_handlers_generic_handler(
            f"{package}.ServerReflection",
            {"ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(budget.stream("reflection", info), Request.FromString, Response.SerializeToString)},
        )
