"""The race a check-then-use resolver loses: a name swapped for a symlink after it was checked and
before it is used. os.open is wrapped so that the swap happens exactly there, on the call that
would follow it, which makes the interleaving deterministic."""
import os

import pytest

from leangrpo_learner import path_root
from leangrpo_learner.path_root import PathError, PathRoot

SECRET = b"SECRET-0f3a\n"


@pytest.fixture()
def tree(tmp_path):
    (tmp_path / "root" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "outside" / "r1").mkdir(parents=True)
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "root" / "runs" / "r1" / "run.json").write_bytes(b"{}")
    yield tmp_path, PathRoot(str(tmp_path / "root"), "checkpoint_dir")
    assert list((tmp_path / "outside" / "r1").iterdir()) == []
    assert (tmp_path / "secret.txt").read_bytes() == SECRET


def swap_before(monkeypatch, name: str, swap) -> list:
    """Runs `swap` once, on the first os.open of `name`; the list it returns fills when it did."""
    done = []
    real_open = os.open

    def open_after_swap(path, *args, **kwargs):
        if not done and os.fspath(path) == name:
            done.append(True)
            swap()
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(path_root.os, "open", open_after_swap)
    return done


def test_the_walk_goes_on_in_the_directory_it_opened_wherever_that_moved(tree, monkeypatch):
    base, root = tree

    def runs_swapped_for_a_symlink():
        os.rename(base / "root" / "runs", base / "root" / "runs-moved")
        os.symlink(base / "outside", base / "root" / "runs")

    done = swap_before(monkeypatch, "r1", runs_swapped_for_a_symlink)
    with root.open_directory("runs/r1", "path") as run:
        run.write_bytes("run.json", b'{"state": "RUNNING"}')
    assert done and (base / "root" / "runs-moved" / "r1" / "run.json").read_bytes() == b'{"state": "RUNNING"}'


def test_a_file_swapped_for_a_symlink_just_before_it_is_opened_is_refused(tree, monkeypatch):
    base, root = tree
    target = base / "root" / "runs" / "r1" / "run.json"

    def swap():
        target.unlink()
        os.symlink(base / "secret.txt", target)

    done = swap_before(monkeypatch, "run.json", swap)
    with root.open_directory("runs/r1", "path") as run, pytest.raises(PathError) as error:
        run.read_bytes("run.json")
    assert done and error.value.args[0] == 'path "runs/r1/run.json" is a symlink; symlinks inside checkpoint_dir are refused'


def test_a_symlink_put_in_place_of_a_file_being_replaced_is_replaced_not_written_through(tree, monkeypatch):
    base, root = tree
    target = base / "root" / "runs" / "r1" / "run.json"

    def swap():
        target.unlink()
        os.symlink(base / "secret.txt", target)

    with root.open_directory("runs/r1", "path") as run:
        # The temporary name is fresh; the swap comes just before it is created.
        real_open = os.open
        done = []

        def open_after_swap(path, *args, **kwargs):
            if not done and os.fspath(path).endswith(".tmp"):
                done.append(True)
                swap()
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(path_root.os, "open", open_after_swap)
        run.write_bytes("run.json", b'{"state": "DONE"}')
    assert done and not target.is_symlink() and target.read_bytes() == b'{"state": "DONE"}'
