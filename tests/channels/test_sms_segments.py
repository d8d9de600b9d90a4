"""SMS segments counted as carriers bill them, and answers cut to fit a number of segments."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes.twilio import count_segments
from truloop_assistant.channels.sms_segments import encoding, fit, segments
from truloop_assistant.i18n.sms_texts import SMS_HELP, SMS_NOT_INVITED

KOREAN = "안녕하세요"  # five syllables, one UTF-16 unit each


def test_english_takes_160_in_one_segment_then_153_a_segment() -> None:
    assert encoding("a" * 160) == "GSM-7"
    assert segments("a" * 160) == 1
    assert segments("a" * 161) == 2
    assert segments("a" * 306) == 2
    assert segments("a" * 307) == 3
    assert segments("a" * 459) == 3


def test_korean_takes_70_in_one_segment_then_67_a_segment() -> None:
    assert encoding("가") == "UCS-2"
    assert segments("가" * 70) == 1
    assert segments("가" * 71) == 2
    assert segments("가" * 134) == 2
    assert segments("가" * 135) == 3
    assert segments("가" * 201) == 3


def test_one_korean_letter_makes_an_english_text_ucs2() -> None:
    text = "a" * 100 + "가"
    assert encoding(text) == "UCS-2"
    assert segments(text) == 2  # 101 units: over 70


def test_extension_characters_take_two_septets_and_are_never_split() -> None:
    assert encoding("[]{}\\~^|€") == "GSM-7"
    assert segments("€" * 80) == 1  # 160 septets
    assert segments("€" * 81) == 2
    # 152 septets then a two-septet character: it goes whole into the second segment
    assert segments("a" * 152 + "€" + "a" * 152) == 3
    assert segments("a" * 151 + "€" + "a" * 153) == 2


def test_an_emoji_is_two_ucs2_units_and_is_never_split() -> None:
    assert encoding("🙂") == "UCS-2"
    assert segments("🙂" * 35) == 1  # 70 units
    assert segments("🙂" * 36) == 2
    assert segments("가" * 66 + "🙂" + "가" * 66) == 3  # the pair does not fit the first part's last unit


def test_a_text_that_fits_is_left_as_it_is() -> None:
    text = "See you on Friday at 7."
    assert fit(text, 1) == text


def test_english_is_cut_after_a_sentence_with_a_gsm_ellipsis() -> None:
    text = ("The dinner is on Friday at 7 pm. " * 12).strip()  # 395 characters: 3 segments
    cut = fit(text, 2)
    assert segments(cut) <= 2
    assert cut.endswith("pm. ...")
    assert encoding(cut) == "GSM-7"  # "…" would have made it UCS-2, at 67 a segment


def test_korean_is_cut_at_a_sentence_with_a_unicode_ellipsis() -> None:
    text = "금요일 저녁 7시에 만나요. " * 20
    cut = fit(text, 2)
    assert segments(cut) <= 2
    assert cut.endswith("만나요. …")
    assert len(cut) <= 134


def test_a_long_sentence_is_cut_at_a_word() -> None:
    text = " ".join(["availability"] * 60)  # one sentence, 779 characters
    cut = fit(text, 1)
    assert segments(cut) == 1
    assert cut.endswith("availability...")


def test_a_text_without_spaces_is_cut_anywhere() -> None:
    cut = fit("가" * 500, 1)
    assert cut == "가" * 69 + "…"


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from("abc XYZ .!?\n€[]^가나다 🙂"),
            st.characters(codec="utf-8", exclude_categories=["Cs"]),
        ),
        max_size=800,
    ),
    st.integers(min_value=1, max_value=5),
)
def test_fit_never_exceeds_the_limit(text: str, max_segments: int) -> None:
    cut = fit(text, max_segments)
    assert segments(cut) <= max_segments
    assert count_segments(cut) <= max_segments  # as Twilio (the fake, counting on its own) counts it
    if segments(text) <= max_segments:
        assert cut == text
    else:
        assert cut.endswith("..." if encoding(text) == "GSM-7" else "…")
        assert encoding(cut) == encoding(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab €[가🙂 .\n"), max_size=600))
def test_segments_agree_with_the_carriers_count(text: str) -> None:
    assert segments(text) == count_segments(text)


def test_what_the_server_texts_back_takes_one_segment() -> None:
    for said in (SMS_HELP, SMS_NOT_INVITED):
        assert segments(said("ko")) == 1, said.ko
        assert segments(said("en")) == 1 and encoding(said("en")) == "GSM-7", said.en
