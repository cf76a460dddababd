"""The service's page for people at `GET /` (page.html), served whole by api_router."""
