"""plates gateway: the service's public HTTP API in front of Triton: Plate Recognizer's Snapshot API, CodeProject.AI's
licence plate reader, and a page for people."""
