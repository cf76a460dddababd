#!/usr/bin/env bash
# Install, build the model repository, start the local Triton server, read the plates of the sample photo, stop.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
SAMPLE="${1:-../shared/data/samples/car.jpg}"
PORT="${PLATES_HTTP_PORT:-8000}"

poetry run plates serve --http-port "$PORT" --grpc-port $((PORT + 1)) --metrics-port $((PORT + 2)) \
  > triton.log 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
echo "starting Triton on localhost:$PORT (log: triton.log) ..." >&2
poetry run python -c "from plates.readiness import wait_for_server; wait_for_server('localhost:$PORT', timeout=300)"
poetry run plates-client "$SAMPLE" --url "localhost:$PORT"
