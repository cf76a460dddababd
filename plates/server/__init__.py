"""Running a Triton server on the model repository, on this machine."""
