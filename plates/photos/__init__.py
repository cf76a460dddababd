"""Photos as the service takes them: files read and refused with one error (`files`), their headers read before any
pixel (`headers`), decoded to HWC BGR pixels on the CPU or on a model's device (`decoding`), and pixels checked for
shape and size (`pixels`)."""
