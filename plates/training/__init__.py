"""Training the recognizer (STN and LPRNet): synthetic plates, real crops, augmentation and the training loop.

Off the serving path: the serving image is built without this package (pyproject.toml excludes it from the wheel).
"""
