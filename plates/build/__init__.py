"""Making the model repository from the weights: the weight files and where they are found (`weights`), the
generated files (`repository`), the detector quantized to INT8 (`quantization`) and the warm-up photo (`warmup`).
Beside serving, never imported by it."""
