"""Plate Recognizer's Snapshot API: api_router (the route), protocol (the wire format), options (the engine options a
request asks for) and serving (a photo through the recognizer, answered in their shape)."""
