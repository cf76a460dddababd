"""`plates watch`: frames from a camera, a stream, a video or a folder, plates followed across them, one event each.

`source` opens and samples the frames, `tracking` follows each plate, `events` votes a track's readings into one
event, `sinks` write events out, and `watcher` runs the loop that ties them together.
"""
