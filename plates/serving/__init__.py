"""What the model repository's `model.py` adapters call: config parsing and the recognition pipeline."""
