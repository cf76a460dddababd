"""The client side of a running service: PlatesClient over Triton's HTTP API (`service`), the deep health check of
a server's models (`health`), readiness and retries, per-thread clients for load, GatewayClient for `plates
gateway`'s APIs, and drawing what a photo's plates are. None of it imports PyTorch: a client-side install has none."""
