"""Data parallelism under torchrun: rank 0 serves gRPC and broadcasts each state-changing command."""
