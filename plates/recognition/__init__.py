"""Reading plate crops: crop preparation, CTC decoding and the grammar of Russian plates."""
