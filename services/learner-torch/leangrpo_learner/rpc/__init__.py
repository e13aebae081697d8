"""gRPC wiring: the LearnerService handlers, health, reflection, the server."""
