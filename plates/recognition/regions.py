"""The federal subject a plate is registered in, from the region code at its end (GIBDD's table of codes).

The table is the MVD's list of codes in use on registration plates (order No. 399 of 2018 with its amendments to
2022, which gave 80, 81, 84 and 85 to the four regions joined that year). Codes withdrawn before that (such as 88)
are not in it: a plate that ends in one is valid in form but has no region.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from plates.recognition.formats import region_code

_CODES: dict[str, tuple[str, ...]] = {
    "Republic of Adygea": ("01",),
    "Republic of Bashkortostan": ("02", "102", "702"),
    "Republic of Buryatia": ("03", "103"),
    "Altai Republic": ("04",),
    "Republic of Dagestan": ("05", "105"),
    "Republic of Ingushetia": ("06",),
    "Kabardino-Balkar Republic": ("07",),
    "Republic of Kalmykia": ("08",),
    "Karachay-Cherkess Republic": ("09",),
    "Republic of Karelia": ("10",),
    "Komi Republic": ("11",),
    "Mari El Republic": ("12",),
    "Republic of Mordovia": ("13", "113"),
    "Sakha Republic (Yakutia)": ("14",),
    "Republic of North Ossetia-Alania": ("15",),
    "Republic of Tatarstan": ("16", "116", "716"),
    "Tuva Republic": ("17",),
    "Udmurt Republic": ("18", "118"),
    "Republic of Khakassia": ("19",),
    "Chechen Republic": ("20", "95"),
    "Chuvash Republic": ("21", "121"),
    "Altai Krai": ("22", "122"),
    "Krasnodar Krai": ("23", "93", "123", "193"),
    "Krasnoyarsk Krai": ("24", "124"),
    "Primorsky Krai": ("25", "125", "725"),
    "Stavropol Krai": ("26", "126"),
    "Khabarovsk Krai": ("27",),
    "Amur Oblast": ("28",),
    "Arkhangelsk Oblast": ("29",),
    "Astrakhan Oblast": ("30",),
    "Belgorod Oblast": ("31",),
    "Bryansk Oblast": ("32",),
    "Vladimir Oblast": ("33",),
    "Volgograd Oblast": ("34", "134"),
    "Vologda Oblast": ("35",),
    "Voronezh Oblast": ("36", "136"),
    "Ivanovo Oblast": ("37",),
    "Irkutsk Oblast": ("38", "138"),
    "Kaliningrad Oblast": ("39", "91"),
    "Kaluga Oblast": ("40",),
    "Kamchatka Krai": ("41",),
    "Kemerovo Oblast (Kuzbass)": ("42", "142"),
    "Kirov Oblast": ("43",),
    "Kostroma Oblast": ("44",),
    "Kurgan Oblast": ("45",),
    "Kursk Oblast": ("46",),
    "Leningrad Oblast": ("47", "147"),
    "Lipetsk Oblast": ("48",),
    "Magadan Oblast": ("49",),
    "Moscow Oblast": ("50", "90", "150", "190", "750", "790"),
    "Murmansk Oblast": ("51",),
    "Nizhny Novgorod Oblast": ("52", "152"),
    "Novgorod Oblast": ("53",),
    "Novosibirsk Oblast": ("54", "154"),
    "Omsk Oblast": ("55", "155"),
    "Orenburg Oblast": ("56", "156"),
    "Oryol Oblast": ("57",),
    "Penza Oblast": ("58",),
    "Perm Krai": ("59", "159"),
    "Pskov Oblast": ("60",),
    "Rostov Oblast": ("61", "161", "761"),
    "Ryazan Oblast": ("62",),
    "Samara Oblast": ("63", "163", "763"),
    "Saratov Oblast": ("64", "164"),
    "Sakhalin Oblast": ("65",),
    "Sverdlovsk Oblast": ("66", "96", "196"),
    "Smolensk Oblast": ("67",),
    "Tambov Oblast": ("68",),
    "Tver Oblast": ("69",),
    "Tomsk Oblast": ("70",),
    "Tula Oblast": ("71",),
    "Tyumen Oblast": ("72",),
    "Ulyanovsk Oblast": ("73", "173"),
    "Chelyabinsk Oblast": ("74", "174", "774"),
    "Zabaykalsky Krai": ("75",),
    "Yaroslavl Oblast": ("76",),
    "Moscow": ("77", "97", "99", "177", "197", "199", "777", "797", "799", "977"),
    "Saint Petersburg": ("78", "98", "178", "198"),
    "Jewish Autonomous Oblast": ("79",),
    "Donetsk People's Republic": ("80",),
    "Luhansk People's Republic": ("81",),
    "Republic of Crimea": ("82",),
    "Nenets Autonomous Okrug": ("83",),
    "Kherson Oblast": ("84",),
    "Zaporozhye Oblast": ("85",),
    "Khanty-Mansi Autonomous Okrug - Yugra": ("86", "186"),
    "Chukotka Autonomous Okrug": ("87",),
    "Yamalo-Nenets Autonomous Okrug": ("89",),
    "Sevastopol": ("92",),
    "Baikonur": ("94",),
}
REGIONS: dict[str, str] = {code: name for name, codes in _CODES.items() for code in codes}


@dataclass(frozen=True)
class Region:
    code: str  # as on the plate: "01", "197"
    name: str  # the federal subject, in English

    def to_dict(self) -> dict:
        return asdict(self)


def region_of(text: str | None) -> Region | None:
    """The region of the plate `text`, or None if it is no valid plate or its code is in no region's list."""
    code = region_code(text) if text else None
    return Region(code, REGIONS[code]) if code in REGIONS else None
