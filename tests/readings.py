"""What the served pipeline reads in the sample photos, in the one place the tests take it from.

car.jpg's plate is a close call for the recognizer (docs/performance.md): a retrained detector or recognizer that
reads it otherwise changes this line, not every test that serves car.jpg.
"""

CAR_PLATE = "B840CK197"
# As Plate Recognizer's API and its clients give it: lower case.
CAR_PLATE_LOWER = CAR_PLATE.lower()
