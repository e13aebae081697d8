# The PyTorch LearnerService (services/learner-torch) for GPU nodes: the same contract and
# config keys as the TS learner, CUDA through the PyTorch base image. Build from the repo root:
#   docker build -f deploy/docker/learner-torch.Dockerfile -t lean-grpo/learner-torch .
# The config is JSON (the TS learner's keys plus a `torch` section) read from
# /etc/lean-grpo/learner-torch.json (compose mounts it; Kubernetes mounts a ConfigMap).
# One process:  docker run --gpus all lean-grpo/learner-torch
# torchrun (data-parallel over the node's GPUs, rank 0 serves gRPC):
#   docker run --gpus all -e LAUNCHER="python -m torch.distributed.run --standalone --nproc_per_node=4" lean-grpo/learner-torch
ARG PYTORCH_IMAGE=pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime

FROM ${PYTORCH_IMAGE} AS runtime
# torch comes with the base image; the service needs only grpcio and protobuf besides.
RUN python -m pip install --no-cache-dir "grpcio>=1.51" "protobuf>=3.21" \
 && mkdir -p /checkpoints /adapters /etc/lean-grpo \
 && chown 65532:65532 /checkpoints /adapters
WORKDIR /app
COPY services/learner-torch/leangrpo_learner /app/leangrpo_learner
COPY deploy/k8s/overlays/gpu/learner-torch.json /etc/lean-grpo/learner-torch.json
ENV PYTHONPATH=/app \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LAUNCHER=python
# Not root: the same uid as the other images, so the shared volumes stay writable.
USER 65532:65532
EXPOSE 50054
# A real grpc.health.v1.Health/Check (empty request; SERVING is the bytes 08 01).
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s CMD ["python", "-c", "import grpc, sys; r = grpc.insecure_channel('127.0.0.1:50054').unary_unary('/grpc.health.v1.Health/Check')(b'', timeout=4); sys.exit(0 if r == b'\\x08\\x01' else 1)"]
# $LAUNCHER is `python` or a torch.distributed.run command line; extra arguments follow serve.
ENTRYPOINT ["/bin/sh", "-c", "exec $LAUNCHER -m leangrpo_learner serve --config-json \"$(cat /etc/lean-grpo/learner-torch.json)\" \"$@\"", "learner-torch"]
