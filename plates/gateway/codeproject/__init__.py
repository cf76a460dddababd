"""CodeProject.AI Server's licence plate reader and the status routes its clients poll: api_router, protocol and
serving."""
