"""What runs inside Triton's models, called by the model repository's `model.py` adapters: their configs, the
detector model, the recognition pipeline, tensors in and out through DLPack, the model processes beside each other
(`stubs`), and the same pipeline in one process (`in_process`)."""
