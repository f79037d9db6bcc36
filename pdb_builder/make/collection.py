"""A collection: several partitions of one shape, chosen by measured node counts.

Each partition is a heuristic on its own (the sum of its tables); the solver takes
the largest of the partitions it finds, so more partitions mean fewer nodes but more
table reads a node: one for each reading of a partition (two on a square shape, read
also through the reflection, unless the partition is its own mirror image).  :func:`build_collection`:

1. grows candidate partitions of the largest pattern sizes that fit the memory
   limit (:func:`candidates`: one compact partition grown from each of
   :data:`~pdb_builder.patterns.GROW_ORDERS`, and Korf & Felner's where the shape
   has one) and builds each, in a scratch folder beside the databases that no
   search reads (``.SHAPE.collection``; a killed build resumes there);
2. measures node counts on sample boards of the shape with the ``measure`` it is
   given (the solver's IDA*: this package never imports the solver), first each
   candidate alone, then greedily: the candidate that cuts the set's nodes most
   joins while the set's cost, nodes x (1 + :data:`READ_COST` x (reads - 1)), still
   falls, up to ``count`` partitions (``reads``: the table reads a node costs,
   :func:`table_reads`).  Sets are compared on the sample boards
   every candidate alone solved within the measure's node limit;
3. publishes the chosen files into the database folder (an atomic rename each),
   their ``metadata`` holding the collection's record: members, every candidate
   with its figures, the sample and how it was drawn.  ``slidepdb inspect`` lists
   the members as one entry.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import random
import shutil
import time
import uuid
from dataclasses import dataclass, field, replace

import h5py

from ..board import Board, Shape
from ..errors import BoardError
from ..locks import remove_unless_read
from ..lookup import mirrors_itself
from ..patterns import GROW_ORDERS, Partition, compact_candidates, default_sizes, named_partition
from ..solvability import decide
from .building import DEFAULT_NAMES, BuildReport, build_pdb, building
from .writing import add_one_bit

log = logging.getLogger("slidepdb.build")

UNIFORM_MAX_CELLS = 16  # up to this many free cells a sample board is uniformly random; beyond, a random walk
WALK_PER_CELL = 4  # a random walk's moves per free cell
# what one more table read a node adds to a node's time.  Measured on 40 of Korf's
# 15-puzzles with the 7-8 tables read directly (one reading: 74.8 ns a node) and also
# through the reflection (two: 118 ns a node).
READ_COST = 0.6


def table_reads(shape: Shape, partition: Partition) -> int:
    """The readings of ``partition`` a node costs on ``shape``: two where the shape has a
    diagonal reflection and the partition is not its own mirror image (the solver reads
    it both ways, :func:`~pdb_builder.lookup.group_lookups`), else one."""
    return 2 if shape.transpose_map is not None and not mirrors_itself(shape, partition.groups) else 1


def cost(nodes: int, reads: int) -> float:
    """A set's search time in units of a node that reads one table."""
    return nodes * (1 + READ_COST * (reads - 1))


@dataclass
class CollectionReport:
    shape: str
    members: list[BuildReport] = field(default_factory=list)
    record: dict = field(default_factory=dict)  # what each member's metadata holds under "collection"


def candidates(shape: Shape, memory_limit: int) -> list[Partition]:
    """Distinct partitions of the largest pattern sizes under ``memory_limit``: one
    grown from each order (named ``SIZES.ORDER``), and the shape's named default
    (Korf & Felner's cells) where it has one of those sizes."""
    sizes = default_sizes(shape, memory_limit)
    name = "-".join(map(str, sizes))
    out: list[Partition] = []
    default = DEFAULT_NAMES.get((shape.width, shape.height))
    if default and not shape.walls and sorted(map(int, default.split("-"))) == sorted(sizes):
        out.append(named_partition(shape, default))
    for _, order, cand in compact_candidates(shape, sizes, name):
        if cand.groups not in [p.groups for p in out]:
            out.append(Partition(f"{name}.{order}", cand.groups))
    return out


def sample_boards(shape: Shape, count: int, seed: int) -> tuple[list[Board], str]:
    """``count`` solvable boards of ``shape`` and how they were drawn: uniformly random
    up to :data:`UNIFORM_MAX_CELLS` free cells, else random walks from the goal
    (:data:`WALK_PER_CELL` moves a free cell, never straight back)."""
    rng = random.Random(seed)
    free = list(shape.free_cells)
    out: list[Board] = []
    if len(free) <= UNIFORM_MAX_CELLS:
        how = f"uniformly random solvable boards, seed {seed}"
        pieces = [shape.goal[c] for c in free]
        while len(out) < count:
            rng.shuffle(pieces)
            cells = list(shape.goal)
            for c, t in zip(free, pieces):
                cells[c] = t
            b = Board(shape, tuple(cells))
            if decide(b).solvable:
                out.append(b)
        return out, how
    moves = WALK_PER_CELL * len(free)
    how = f"random walks of {moves} moves from the goal (never straight back), seed {seed}"
    for _ in range(count):
        cells = list(shape.goal)
        b, prev = cells.index(0), -1
        for _ in range(moves):
            c = rng.choice([d for d in shape.neighbours[b] if d != prev] or list(shape.neighbours[b]))
            cells[b], cells[c] = cells[c], 0
            prev, b = b, c
        out.append(Board(shape, tuple(cells)))
    return out, how


def _collection_id(path) -> str:
    """The collection ``path`` belongs to ("" for none, or a file that does not open)."""
    try:
        with h5py.File(path, "r") as f:
            return str(json.loads(f.attrs.get("metadata", "{}")).get("collection", {}).get("id", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def _set_record(path, record: dict) -> None:
    """The collection's record into one (unpublished) member's ``metadata``."""
    with h5py.File(path, "r+") as f:
        meta = json.loads(f.attrs.get("metadata", "{}"))
        meta["collection"] = record
        f.attrs["metadata"] = json.dumps(meta, sort_keys=True)
        f.flush()
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


@dataclass
class CollectionOptions:
    """How :func:`build_collection` builds, measures and publishes a collection."""

    db_dir: object = None
    samples: int = 12  # sample boards drawn when none are given
    seed: int = 1
    boards: list[Board] | None = None  # the sample (default: :func:`sample_boards`)
    two_bit: bool = True
    zero_aware: bool = False  # each member's zero-aware entries too (the candidates are measured with them)
    one_bit: bool = False  # and the members' one-bit copies (pdb_builder.one_bit)
    layout: str = "contiguous"
    overwrite: bool = False
    progress: object = None
    on_step: object = None
    on_candidate: object = None


def build_collection(
    shape: Shape, count: int, memory_limit: int, measure, options: CollectionOptions | None = None, /, **changes
) -> CollectionReport:
    """Build, measure and publish a collection of at most ``count`` partitions
    (module docstring), as ``options`` say (:class:`CollectionOptions`;
    ``changes``: fields of it to change).  ``measure(paths, boards)`` returns a dict with at least
    ``nodes`` (summed over ``boards``) for the heuristic of those files, and where it
    can ``per-board``: ``[nodes, solved]`` of each board.  ``boards``:
    the sample (default: :func:`sample_boards`).  ``on_step(text)``: one line per
    build and measurement; ``on_candidate(shape, partition)`` before each build."""
    o = replace(options or CollectionOptions(), **changes)
    from ..storage import default_db_dir, pdb_filename

    if count < 1:
        raise BoardError("a collection needs at least one partition")
    say = o.on_step or (lambda text: None)
    folder = default_db_dir(o.db_dir)
    scratch = folder / f".{shape.key}.collection"
    cands = candidates(shape, memory_limit)
    targets = [folder / pdb_filename(shape, p.name) for p in cands]
    taken = [t.name for t in targets if t.exists()]
    if taken and not o.overwrite:
        raise BoardError(f"{folder}: {', '.join(taken)} exist already; pass --overwrite to replace them")
    built = _build_candidates(shape, cands, scratch, o, say)
    how = "given"
    if o.boards is None:
        o.boards, how = sample_boards(shape, o.samples, o.seed)
    path_of = {name: scratch / pdb_filename(shape, name) for name in built}
    figures: list[dict] = []
    common: set[int] | None = None  # the sample boards every candidate alone solved: what sets are compared on

    def score(fig: dict) -> None:
        """``compared``: the set's nodes on the boards of ``common`` (a board a search
        stopped at its node limit says only that it needs more, so boards some
        candidate did not solve would blur every comparison); ``cost`` from them and the
        set's table reads."""
        per = fig.get("per-board")
        fig["compared"] = fig["nodes"] if per is None else sum(per[i][0] for i in sorted(common or ()))
        fig["reads"] = sum(table_reads(shape, built[n][0]) for n in fig["set"])
        fig["cost"] = cost(fig["compared"], fig["reads"])

    def measured(names: tuple[str, ...]) -> dict:
        """The set's figures, also kept (and scored later, for the singles) in ``figures``."""
        t0 = time.perf_counter()
        fig = {"set": list(names), **measure([path_of[n] for n in names], o.boards)}
        fig.setdefault("seconds", time.perf_counter() - t0)
        if common is not None:
            score(fig)
        figures.append(fig)
        say(f"measured {' + '.join(names)}: {fig['nodes']:,} nodes, {fig.get('solved', '?')} boards solved, "
            f"{fig['seconds']:.2f} s")  # fmt: skip
        return fig

    singles = {name: measured((name,)) for name in built}
    pers = [f.get("per-board") for f in singles.values()]
    common = (
        set(range(len(o.boards))) if None in pers else {i for i in range(len(o.boards)) if all(p[i][1] for p in pers)}
    )
    for fig in singles.values():
        score(fig)
    say(f"compared on the {len(common)} of {len(o.boards)} sample boards every candidate solved")
    chosen = [min(singles, key=lambda n: singles[n]["compared"])]
    nodes, best_cost = singles[chosen[0]]["compared"], singles[chosen[0]]["cost"]
    while len(chosen) < count:
        rest = [n for n in built if n not in chosen]
        if not rest:
            break
        trials = {n: measured(tuple(chosen + [n])) for n in rest}
        best = min(trials, key=lambda n: trials[n]["compared"])
        say(f"best with {' + '.join(chosen)}: {best}, cost {trials[best]['cost']:,.0f} against {best_cost:,.0f}")
        if trials[best]["cost"] >= best_cost:
            break  # fewer nodes, but not enough to pay for one more read a node
        chosen.append(best)
        nodes, best_cost = trials[best]["compared"], trials[best]["cost"]
    record = {
        "id": uuid.uuid4().hex[:12],
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "members": [pdb_filename(shape, n) for n in chosen],
        "asked": count,
        "memory-limit": memory_limit,
        "candidates": [{"name": n, "spec": built[n][0].spec(), "mean-h": built[n][1].mean_h} for n in built],
        "figures": figures,
        "sample": {"boards": [str(b) for b in o.boards], "drawn": how, "compared-on": sorted(common)},
        "rule": "greedy: the candidate with the fewest nodes, then the one that cuts nodes most, "
        f"while nodes x (1 + {READ_COST} x (table reads a node - 1)) falls",
    }
    report = _publish(shape, folder, record, chosen, built, path_of, o)
    shutil.rmtree(scratch, ignore_errors=True)
    say(f"collection {record['id']}: {' + '.join(chosen)} ({nodes:,} nodes on the sample)")
    return report


def _build_candidates(shape: Shape, cands: list[Partition], scratch, o, say) -> dict:
    """Each candidate built into ``scratch``: its name -> (partition, BuildReport)."""
    built = {}
    for p in cands:
        if o.on_candidate is not None:
            o.on_candidate(shape, p)
        cb = None if o.progress is None else (lambda i, d, v, m, s, name=p.name: o.progress(name, i, d, v, m, s))
        rep = build_pdb(  # (the one-bit copies only for the members: they change no figure measured here)
            shape, p, scratch, layout=o.layout, progress=cb, two_bit=o.two_bit, zero_aware=o.zero_aware, one_bit=False
        )
        built[p.name] = (p, rep)
        say(f"candidate {p.name} = {p.spec()}: {rep.status}, mean h {rep.mean_h:.3f}")
    return built


def _publish(shape: Shape, folder, record: dict, chosen: list[str], built: dict, path_of: dict, o) -> CollectionReport:
    """The chosen members moved from the scratch folder into ``folder`` with the collection's
    record (and their one-bit copies where asked); an earlier collection's other members go."""
    from ..storage import pdb_filename

    report = CollectionReport(shape.key, record=record)
    if o.overwrite:  # the shape's earlier collection goes: its members that this one does not replace
        for old in folder.glob(f"{shape.key}.pdb.*.h5"):
            if old.name not in record["members"] and _collection_id(old):
                if remove_unless_read(old):
                    log.info("%s: a member of an earlier collection; removed", old)
                else:  # (admissible still: a search takes the largest of every table it finds)
                    log.warning("%s: a member of an earlier collection, kept: a search reads it now", old)
    for n in chosen:
        src, dst = path_of[n], folder / pdb_filename(shape, n)
        if o.one_bit and o.zero_aware:
            add_one_bit(src)
        _set_record(src, record)
        with building(dst):  # (one publisher of a file at a time: pdb_builder.make.building.building)
            os.replace(src, dst)
        rep = built[n][1]
        rep.path = str(dst)
        report.members.append(rep)
    return report


__all__ = ["CollectionReport", "GROW_ORDERS", "build_collection", "candidates", "sample_boards"]
