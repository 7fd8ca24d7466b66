"""Unit names and their canonical forms (one spelling per unit; see ``quantity``).

Durations normalise to s/ms/min/h/days/weeks/months/years, sizes to KB/MB/GB/TB (and the
KiB family), money to ISO 4217 codes, rates to req/s and req/min, counts to the plural
noun ("times", "people", "tokens"…). ``UNIT_CLASS`` groups units by dimension so "30 s"
and "1 min" can be compared as the same kind of value.
"""

from __future__ import annotations


def _table(spec: str) -> dict[str, str]:
    """Parse ``"canonical: surface surface…; …"`` into ``{surface.lower(): canonical}``."""
    out: dict[str, str] = {}
    for entry in spec.split(";"):
        if entry.strip():
            canonical, surfaces = entry.split(":", 1)
            for surface in surfaces.split("|"):
                out[surface.strip().lower()] = canonical.strip()
    return out


# Latin units: matched case-insensitively, must not run into a following letter.
UNITS: dict[str, str] = _table("""
    ms: ms|msec|msecs|millisecond|milliseconds;
    s: s|sec|secs|second|seconds;
    min: m|min|mins|minute|minutes;
    h: h|hr|hrs|hour|hours;
    days: d|day|days|business days|working days;
    weeks: wk|wks|week|weeks;
    months: mo|month|months;
    years: yr|yrs|year|years;
    nights: night|nights;
    KB: kb; KiB: kib; MB: mb|meg|megs; MiB: mib; GB: gb|gig|gigs; GiB: gib; TB: tb; TiB: tib;
    Mbps: mbps; Gbps: gbps;
    %: %|percent|per cent|pct;
    USD: usd|dollar|dollars|bucks; EUR: eur|euro|euros; GBP: gbp|pound|pounds|quid;
    JPY: jpy|yen; CNY: cny|rmb|yuan;
    °C: °c|℃|celsius|degrees celsius; °F: °f|℉|fahrenheit;
    req/s: req/s|reqs/s|requests/s|rps|qps|requests per second|request per second
           |queries per second|requests a second|/s;
    req/min: req/min|requests/min|rpm|requests per minute|requests a minute|/min;
    tokens/s: tokens/s|tok/s|tokens per second;
    req: req|reqs|request|requests|queries;
    times: x|times|time|retries|retry|attempts|attempt;
    people: people|persons|person|pax|guests|adults;
    users: users|user; tokens: tokens|token|tok; words: words|word;
    chars: chars|char|characters|character; lines: lines|line|loc;
    spaces: spaces; items: items; cores: cores|vcpus|cpus; replicas: replicas;
    workers: workers; rows: rows|records; pages: pages; files: files; tests: tests;
    nodes: nodes; gpus: gpus; km: km|kilometers|kilometres; mi: mi|miles; kg: kg|kgs|kilos
    |kilograms; lb: lb|lbs; cm: cm|centimeters|centimetres; ft: ft|feet|foot;
    px: px|pixels; fps: fps
""")

# CJK units and counters: no word boundary is needed (or possible) after them.
CJK_UNITS: dict[str, str] = _table("""
    ms: 毫秒|ミリ秒; s: 秒钟|秒鐘|秒; min: 分钟|分鐘|分間|分;
    h: 个小时|個小時|个钟头|小时|小時|時間; days: 日間|天|日;
    weeks: 个星期|個星期|星期|週間|周|週; months: 个月|個月|ヶ月|か月|カ月|ヵ月|箇月;
    years: 年; nights: 晚|泊|夜;
    times: 次|回|遍|倍; people: 个人|個人|人|名|位;
    CNY: 块钱|塊錢|块|塊|元|人民币|人民幣; JPY: 円|日元|日圓; USD: 美元|美金|ドル;
    EUR: 欧元|歐元|ユーロ; GBP: 英镑|英鎊; °C: 度|℃;
    req: 个请求|個請求|次请求|请求|請求|リクエスト; tokens: 个token|個token|トークン;
    chars: 文字|字; lines: 行; pages: 页|頁|ページ; users: 个用户|個用戶|用户|用戶|ユーザー;
    %: パーセント; items: 件|个|個|つ
""")

UNIT_CLASS: dict[str, str] = {
    **{u: "time" for u in ("ms", "s", "min", "h", "days", "weeks", "months", "years")},
    **{u: "data" for u in ("KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB")},
    **{u: "money" for u in ("USD", "EUR", "GBP", "JPY", "CNY")},
    **{u: "rate" for u in ("req/s", "req/min", "tokens/s")},
    **{u: "length" for u in ("km", "mi", "cm", "ft")},
    **{u: "mass" for u in ("kg", "lb")},
}


def unit_class(unit: str | None) -> str | None:
    """Dimension of a canonical unit ("time", "data", "money", "rate", "length",
    "mass"), else the unit."""
    return UNIT_CLASS.get(unit, unit) if unit else None
