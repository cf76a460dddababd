"""Where `plates watch` sends its events beyond its own files: a dispatcher, and one module per transport.

`dispatcher` hands each event (and each alert: an event whose plate is watched) to every transport; `mqtt` is the
MQTT transport, with its own connection, queue and reconnects, so that a broker that goes away never holds up a
camera; `homeassistant` writes the MQTT discovery configs that make each camera a Home Assistant device.
"""
