"""Running a Triton server on the model repository on this machine: the launcher, the supervisor that heals it and
warms it up, its child processes and their memory."""
