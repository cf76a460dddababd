"""The GPU check (scripts/gpu-bundle.sh, scripts/gpu-check.sh): the bundle that travels to a GPU machine, and the
check run there (docs/gpu.md)."""
