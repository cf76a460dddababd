"""`plates watch`: frames from cameras, streams, videos or folders, plates followed across them, one event each.

`source` opens and samples the frames, `tracking` follows each plate, `events` votes a track's readings into one
event, `watchlist` marks the events of watched plates, `sinks` write events out, `watcher` runs one camera's loop,
`site` reads a site's settings and `runner` runs its cameras side by side. Events beyond files go through
plates.comms (MQTT, Home Assistant).
"""
