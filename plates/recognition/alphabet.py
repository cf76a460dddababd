"""The recognizer's output classes: digits, the twelve Cyrillic letters that look Latin, then the CTC blank."""

ALPHABET = "0123456789ABEKMHOPCTYX"
BLANK = len(ALPHABET)  # the last class, 22
NUM_CLASSES = len(ALPHABET) + 1
LETTERS = ALPHABET[10:]
