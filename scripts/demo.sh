#!/usr/bin/env bash
# Install, build the model repository, start the service locally (Triton and the gateway), read the plates of the
# sample photo with plates-client (Triton) and with curl (the gateway's Plate Recognizer API), stop.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
SAMPLE="${1:-${PLATES_SHARED_DIR:-../shared}/data/samples/car.jpg}"
PORT="${PLATES_HTTP_PORT:-8000}"
GATEWAY="${PLATES_GATEWAY_PORT:-8080}"

poetry run plates serve --http-port "$PORT" --grpc-port $((PORT + 1)) --metrics-port $((PORT + 2)) \
  --gateway-port "$GATEWAY" \
  > triton.log 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
echo "starting Triton on localhost:$PORT (log: triton.log) ..." >&2
poetry run python -c "from plates.client.readiness import wait_for_server as w; w('localhost:$PORT', timeout=300)"
poetry run plates-client "$SAMPLE" --url "localhost:$PORT"
curl -sS -F upload=@"$SAMPLE" "http://127.0.0.1:$GATEWAY/v1/plate-reader/"
echo
