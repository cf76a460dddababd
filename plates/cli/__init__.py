"""Command-line entry points: `plates` (serve, eval) and `plates-client`."""
