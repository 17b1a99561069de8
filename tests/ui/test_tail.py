"""Riding the tail: the app's own moves are told from the person's."""

from __future__ import annotations

from replay_tui.ui.features.run.tail import TailRider


def test_the_cursor_rides_until_the_person_moves_it_then_counts_new_rows() -> None:
    tail = TailRider()
    # 10 rows came: ride to the last
    assert tail.rows_grew(cursor=0, following=True, rows=10)
    tail.will_move(9, 9, cursor=0)
    # 5 more came before the app's own move was seen: still riding
    assert tail.rows_grew(cursor=9, following=True, rows=15)
    tail.will_move(14, 14, cursor=9)
    tail.moved(9, at_tail=False, following=True, rows=15, cursor=9)  # the app's move, late
    assert tail.riding
    # the person presses k: off the tail; later rows are counted, not followed
    tail.moved(13, at_tail=False, following=True, rows=15, cursor=13)
    assert not tail.riding
    assert not tail.rows_grew(cursor=13, following=True, rows=40)
    assert tail.unseen(40) == 25
    # End: back on the tail, nothing unseen
    tail.ride(39)
    assert tail.riding and tail.unseen(40) == 0


def test_a_move_seen_before_its_message_is_the_person_leaving() -> None:
    tail = TailRider()
    tail.will_move(9, 9, cursor=0)
    # the person moved to row 5 and rows arrived before their message did
    assert not tail.rows_grew(cursor=5, following=True, rows=12)
    assert tail.unseen(20) == 8


def test_nothing_rides_when_not_following() -> None:
    tail = TailRider()
    assert not tail.rows_grew(cursor=0, following=False, rows=10)
    tail.moved(3, at_tail=False, following=False, rows=10, cursor=3)
    assert tail.riding and tail.unseen(10) == 0
