"""plates gateway: the service's public HTTP API, Plate Recognizer's Snapshot API in front of Triton."""
