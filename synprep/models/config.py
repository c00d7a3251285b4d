"""Configuration dataclasses of the models, with strict loading and presets.

Every component has its own dataclass; :meth:`Config.from_dict` rejects unknown keys
(a misspelled knob is an error, not a silent default) and values of the wrong type.
A setting's range is declared beside it, in its field (:func:`setting`: ``lr: float =
setting(7e-4, gt=0)``), and checked in one place for every :class:`Config` subclass
(:func:`check_bounds`), by key path (``config.train.lr = nan: expected a finite number
> 0``), whether the config is read (:meth:`Config.from_dict`) or built in code (the
check runs before each class's own ``__post_init__``). Invariant: a float setting is
finite unless its field says otherwise (``finite=False``): a NaN or an infinity is
never stored, since every comparison with a NaN is false and a range check written as
``x <= 0`` lets it through. ``__post_init__`` checks what involves several settings,
and a sub-config's ``check_model(model)`` the bounds that involve the model's sizes (a
layer number <= ``enc_layers``). Every default carries a comment saying why it is
the default (usually: the value of the paper that introduced the component).

The top-level :class:`ModelConfig` holds the Transformer size and one sub-config per
variant family; a variant reads only its own sub-config, so switching
``variant: vanilla`` to ``variant: pascal`` is the one change a comparison needs.
Sizes come from :data:`PRESETS`; the vocabulary sizes and the label count are not
knobs -- the trainer fills them from the shards' manifest.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from ..errors import ConfigError

__all__ = [
    "Config",
    "Bounds",
    "setting",
    "check_bounds",
    "ModelConfig",
    "PascalConfig",
    "GPSConfig",
    "SAConfig",
    "GCNConfig",
    "ParentConfig",
    "PrefixConfig",
    "PRESETS",
    "merge_dicts",
]


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "null"
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against the annotation ``tp`` (ints are accepted for floats;
    bools are never accepted as numbers nor numbers as bools)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        errors = []
        for alt in typing.get_args(tp):
            try:
                return _coerce(value, alt, where)
            except ConfigError as e:
                errors.append(e)
        raise ConfigError(f"{where} = {value!r}: expected {_type_name(tp)}")
    if origin is Literal:
        if value in typing.get_args(tp):
            return value
        raise ConfigError(f"{where} = {value!r}: expected one of {_type_name(tp)}")
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where} = {value!r}: expected {_type_name(tp)}")
        (item,) = typing.get_args(tp)[:1]
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if tp is type(None):
        if value is None:
            return None
        raise ConfigError(f"{where} = {value!r}: expected null")
    if isinstance(tp, type) and issubclass(tp, Config):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{where} = {value!r}: expected a mapping of {tp.__name__} keys")
        return tp.from_dict(value, where)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif isinstance(value, tp):
        return value
    raise ConfigError(f"{where} = {value!r}: expected {_type_name(tp)}, got {type(value).__name__}")


@dataclass(frozen=True)
class Bounds:
    """The range of a numeric setting (each number of a list setting): ``ge``/``gt``
    (at least / above) and ``le``/``lt`` (at most / below); ``finite``: a float must be
    finite (the default for every float setting; ``finite=False`` lets an infinity
    through where it means something, never a NaN). ``min_items``/``max_items``: how
    many items a list setting holds (an empty list where null means "every layer"
    would silently mean none)."""

    ge: Optional[float] = None
    gt: Optional[float] = None
    le: Optional[float] = None
    lt: Optional[float] = None
    finite: bool = True
    min_items: Optional[int] = None
    max_items: Optional[int] = None

    def describe(self, integer: bool = False) -> str:
        """In words: ``a finite number >= 0 and < 1``, ``an integer >= 1``."""
        parts = [f"{op} {_num(v)}" for op, v in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt))
                 if v is not None]
        what = "an integer" if integer else "a finite number" if self.finite else "a number (or an infinity)"
        return what + (" " + " and ".join(parts) if parts else "")

    def holds(self, v: float) -> bool:
        if isinstance(v, float) and (math.isnan(v) or (self.finite and math.isinf(v))):
            return False
        return ((self.ge is None or v >= self.ge) and (self.gt is None or v > self.gt)
                and (self.le is None or v <= self.le) and (self.lt is None or v < self.lt))


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**63 else f"{v:g}"


#: the bounds of a setting that declares none: any finite number
FINITE = Bounds()


def setting(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
            ge: Optional[float] = None, gt: Optional[float] = None, le: Optional[float] = None,
            lt: Optional[float] = None, finite: bool = True, min_items: Optional[int] = None,
            max_items: Optional[int] = None, **kw: Any) -> Any:
    """A :class:`Config` field with its range declared beside it (:class:`Bounds`):
    ``warmup: int = setting(4000, ge=1)``; checked by :func:`check_bounds`."""
    meta = dict(kw.pop("metadata", None) or {})
    meta["bounds"] = Bounds(ge=ge, gt=gt, le=le, lt=lt, finite=finite, min_items=min_items, max_items=max_items)
    return field(default=default, default_factory=default_factory, metadata=meta, **kw)


def _numbers(value: Any, where: str):
    """(key path, number) of every number in a setting's value (itself, or each item
    of a list); bools are not numbers."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield where, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{where}[{i}]")


def check_bounds(cls: type, values: dict, where: str) -> None:
    """ConfigError, naming the key path ``<where>.<key>``, for the first number in
    ``values`` (settings of the Config class ``cls`` by name) outside its field's
    :class:`Bounds` (:data:`FINITE` where it declares none): the one check of every
    Config's ranges."""
    for f in dataclasses.fields(cls):
        if f.name not in values or f.metadata.get("internal"):
            continue
        b = f.metadata.get("bounds", FINITE)
        value, key = values[f.name], f"{where}.{f.name}" if where else f.name
        if isinstance(value, (list, tuple)) and not (b.min_items or 0) <= len(value) <= (b.max_items or len(value)):
            n = (f"exactly {b.min_items}" if b.min_items == b.max_items else
                 f"at least {b.min_items}" if b.max_items is None else f"{b.min_items} to {b.max_items}")
            raise ConfigError(f"{key} = {value!r}: expected a list of {n} item(s)"
                              + (" (or null)" if f.default is None else ""))
        for path, v in _numbers(value, key):
            if not b.holds(v):
                raise ConfigError(f"{path} = {v!r}: expected {b.describe(isinstance(v, int))}")


@dataclass(frozen=True)
class Config:
    """Base class: strict construction from plain dicts (YAML/JSON) and back. Frozen:
    a config is made once, at the edge, and handed down as it is (a change is a new
    config: :meth:`updated`, or ``dataclasses.replace`` for a few keys). Each
    subclass's ranges are checked (:func:`check_bounds`) before its own
    ``__post_init__`` runs, however it is built."""

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("__post_init__")
        if own is not None:  # the bounds first, then the class's own checks (which may call super()'s)

            def __post_init__(self, _own=own):
                Config.__post_init__(self)
                _own(self)

            cls.__post_init__ = __post_init__

    def __post_init__(self):
        check_bounds(type(self), {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, "")

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        where = where or cls.__name__
        data = dict(data or {})
        hints = typing.get_type_hints(cls)
        known = {f.name for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"known keys: {', '.join(sorted(known))}"
            )
        kw = {k: _coerce(v, hints[k], f"{where}.{k}") for k, v in data.items()}
        check_bounds(cls, kw, where)  # by key path; again (no path) when the object is built
        try:
            return cls(**kw)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def updated(self, changes: dict):
        """A copy with ``changes`` merged in (nested dicts merge into sub-configs)."""
        return type(self).from_dict(merge_dicts(self.to_dict(), changes))


def _plain(value: Any) -> Any:
    """``value`` as plain data (YAML/JSON): each config by its own ``to_dict``."""
    if isinstance(value, Config):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def merge_dicts(base: dict, changes: dict) -> dict:
    """``base`` with ``changes`` merged in, recursively for nested dicts."""
    out = dict(base)
    for k, v in changes.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_dicts(out[k], v)
        else:
            out[k] = v
    return out


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


# --------------------------------------------------------------------------- components


@dataclass(frozen=True)
class PascalConfig(Config):
    """Parent-scaled self-attention (Bugliarello & Okazaki, 2020)."""

    # 2 of the 8 heads of layer 1: the released en->de setting (e-bug/pascal,
    # experiments/nc11en2de/transformer_pascal/train.sh: --encoder-pascal-heads 2 0 0 0 0 0)
    heads: int = setting(2, ge=1)
    # 1-based encoder layer; the paper puts PASCAL heads in the first layer only
    layer: int = setting(1, ge=1)
    # variance of the Gaussian centred on the parent; the paper's best value is 1
    variance: float = setting(1.0, gt=0)
    # probability of ignoring the parent for a (head, token) during training (its scores
    # are left unscaled); 0 = the method as defined. The released en->de script used 0.4.
    parent_ignoring: float = setting(0.0, ge=0, lt=1)
    # gaussian: scores times N(j; p_t, variance) (001 Eq. 5-6); parent-only: the head
    # attends to the parent position alone, the keys j with |j - p_t| <= 0.5 (the middle
    # piece(s) of the parent word) -- 001 Table 7b's "Parent-only" row, "weights only
    # placed on parents" (our reading: no weight elsewhere)
    weighting: Literal["gaussian", "parent-only"] = "gaussian"

    def check_model(self, model: ModelConfig) -> None:
        require(self.heads <= model.n_heads, f"pascal.heads = {self.heads} > n_heads = {model.n_heads}")
        require(self.layer <= model.enc_layers, f"pascal.layer = {self.layer} > enc_layers = {model.enc_layers}")


@dataclass(frozen=True)
class GPSConfig(Config):
    """Root-path (global syntactic position) encoding added to attention logits."""

    # 1-based encoder layer(s) whose attention logits get the path term: the first layer,
    # the paper's main setting (002 §4.1 "at the bottom layer"); a list adds it to several
    # layers, [1, 2, 3, 4, 5, 6] = 002 Table 3's "1-6" (each layer its own projections)
    layer: Union[int, list[int]] = setting(1, ge=1, min_items=1)
    # size of the label embeddings fed to the LSTM: labels are few (~40), 32 is plenty
    d_label: int = setting(32, ge=1)
    # size of the LSTM state = the syntactic position vector
    d_path: int = setting(64, ge=1)
    # longest root path read (deeper words keep their top d labels); UD trees are
    # rarely deeper than 20
    max_depth: int = setting(32, ge=1)

    def __post_init__(self):
        layers = self.layers
        require(len(set(layers)) == len(layers), f"layer = {self.layer}: a layer is given twice")

    def check_model(self, model: ModelConfig) -> None:
        require(max(self.layers) <= model.enc_layers, f"gps.layer = {self.layer}: a layer exceeds enc_layers = {model.enc_layers}")

    @property
    def layers(self) -> list[int]:
        """The 1-based layers, as a list."""
        return [self.layer] if isinstance(self.layer, int) else list(self.layer)


@dataclass(frozen=True)
class SAConfig(Config):
    """Structured attention (Bisk & Tran, 2018: ../shared/papers/004, §4-§5) and its
    comparison systems (variants ``sa``, ``sa-hard``, ``fa``, ``sa-1set``)."""

    # hard attention over the head-word marginals: "none" = soft marginals (SA-NMT);
    # "greedy" = 004 Eq. 15, each word takes the argmax of its marginals (forward hard,
    # backward straight-through; SA-NMT-hard); "cle" = the Chu-Liu-Edmonds tree of the
    # scores instead (004 §4.3 names it and rejects it as slow; not a paper system).
    # null = the variant's own: none for sa, fa and sa-1set, greedy for sa-hard (filled
    # at resolution, synprep.models.resolve, so a resolved config never holds the null)
    hard: Optional[Literal["none", "greedy", "cle"]] = None
    # share the content attention's weights with the syntactic context (004 Eq. 10,
    # the paper's SA-NMT and FA-NMT "shared"); false = a separate attention over M
    # (004 Eq. 13-14, the "no-shared" rows of Tables 2-3). Unused by sa-1set.
    shared: bool = True
    # gate on the syntactic context, from the decoder's query state only (004 Eq. 11):
    # "vector" = sigma(W_g h) with W_g d x d, one gate per dimension (the paper's);
    # "head" = one scalar gate per attention head (a coarser Transformer option);
    # "none" = the context is added ungated (an ablation)
    gate: Literal["vector", "head", "none"] = "vector"
    # 1-based encoder layer whose output is S (the annotations the head-word selection
    # reads, 004 §4.1); 0 = the top layer: the states the decoder attends to, which in
    # the paper's BiLSTM are the same S (004 Eq. 1, §4)
    layer: int = setting(0, ge=0)
    # 1-based decoder layers whose cross-attention reads the syntactic context; null =
    # every layer (filled at resolution): each Transformer cross-attention is an instance of 004 Eq. 3-4, so
    # each gets Eq. 10-12 (the paper's LSTM has a single attention)
    dec_layers: Optional[list[int]] = setting(None, ge=1, min_items=1)
    # clamp the scores phi to [lo, hi] before the marginals; null = no clamp (the
    # paper, §4.1). ketranm/sa-nmt's models.py clamps to [-5, 7] (its -min_thres,
    # -max_thres defaults): a compatibility option
    clamp: Optional[list[float]] = setting(None, min_items=2, max_items=2)

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        where = where or cls.__name__
        data = dict(data or {})
        if isinstance(data.get("hard"), bool):
            raise ConfigError(
                f"{where}.hard = {str(data['hard']).lower()}: sa.hard is a string since the Eq. 15 hard attention: "
                "'none' (soft marginals), 'greedy' (004 Eq. 15, the default of variant sa-hard) or 'cle' "
                "(the Chu-Liu-Edmonds tree the old 'true' meant); or leave it out for the variant's default"
            )
        if isinstance(data.get("gate"), bool):
            raise ConfigError(
                f"{where}.gate = {str(data['gate']).lower()}: sa.gate is a string: 'vector' (004 Eq. 11, the old true), "
                "'head' or 'none' (the old false)"
            )
        if "d_arc" in data:
            raise ConfigError(
                f"{where}.d_arc: removed; the scores are phi = S_q^T S_k / sqrt(d) with full d x d projections "
                "(004 §4.1), so there is no arc size to set"
            )
        return super().from_dict(data, where)

    def __post_init__(self):
        if self.clamp is not None:
            require(
                self.clamp[0] < self.clamp[1],
                f"clamp = {self.clamp}: expected [lo, hi] with lo < hi, or null",
            )

    def check_model(self, model: ModelConfig) -> None:
        require(self.layer <= model.enc_layers, f"sa.layer = {self.layer} > enc_layers = {model.enc_layers}")
        if self.dec_layers is not None:
            require(
                all(x <= model.dec_layers for x in self.dec_layers),
                f"sa.dec_layers = {self.dec_layers}: a layer exceeds dec_layers = {model.dec_layers}",
            )


@dataclass(frozen=True)
class GCNConfig(Config):
    """Gated labelled graph convolution over the decoder graph (Marcheggiani & Titov,
    2017; Bastings et al., 2017)."""

    # residual GCN layers above the embeddings; the tree-decoder papers use 2 (000 §5
    # "The GCN architecture includes 2 layers with residual connections"; the tree-medium
    # and tree-large presets set it). 1 outside them: each layer is recomputed for every
    # prefix of the bidirectional decoder, and Bastings et al. found 1-2 enough
    layers: int = setting(1, ge=1)
    # scalar edge gates sigma(h_u . w_dir + b_label) (003 §4); variant gcn-nogates
    # (the papers' -Gates) switches them off together with the labels
    gates: bool = True
    # label-specific biases b_(dir,label) (003 §4); false (direction-only biases) is the
    # -Labels ablation (variant gcn-nolabels)
    labels: bool = True


@dataclass(frozen=True)
class ParentConfig(Config):
    """The Parent decoder head (Choshen & Abend): a head that attends only to the token
    itself and its parents in the graph built so far."""

    # one head in each decoder layer: the paper's Parent variant dedicates one head
    heads: int = setting(1, ge=1)
    # 1-based decoder layers that get the parent heads; null = every layer (filled at
    # resolution, synprep.models.resolve)
    layers: Optional[list[int]] = setting(None, ge=1, min_items=1)
    # what a parent head sees: "paper" = the token and its parents in the graph of 000 §3
    # (an arc token x sees the head H; a dependent's pieces see H and x); "released" =
    # also x sees its dependent's pieces (D -> x), as borgr/nematus (branch generation,
    # nematus/data_iterator.py convert_text_to_graph) builds the mask -- the code
    # behind the paper's numbers, offered for comparison
    mask: Literal["paper", "released"] = "paper"

    def check_model(self, model: ModelConfig) -> None:
        require(self.heads <= model.n_heads, f"parent.heads = {self.heads} > n_heads = {model.n_heads}")
        if self.layers is not None:
            require(
                all(x <= model.dec_layers for x in self.layers),
                f"parent.layers = {self.layers}: a layer exceeds dec_layers = {model.dec_layers}",
            )


@dataclass(frozen=True)
class PrefixConfig(Config):
    """How bidirectional decoders (bitrans, parent, gcn) are trained.

    ``exact``: every prefix is its own pass (what the model means; quadratic in the
    target length). ``sampled``: ``k`` prefixes per sentence drawn uniformly without
    replacement, their losses weighted by length/k -- an unbiased estimate of the exact
    loss at about k/2 single passes of cost, but only k predictions a sentence carry
    gradient (an approximation of ours, never the papers')."""

    # exact: the papers train on every prefix, recomputing the decoder after every
    # generated token (003 §3 and footnote 3); sampled must be asked for
    mode: Literal["exact", "sampled"] = "exact"
    # prefixes per sentence in sampled mode; 4 gives ~2 passes of compute per sentence
    k: int = setting(4, ge=1)


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class ModelConfig(Config):
    """The encoder-decoder Transformer and its variant. Defaults: Transformer base."""

    # which model: a declared variant (synprep.models.specs; docs/models.md's table);
    # vanilla, the Transformer, is the baseline every comparison needs
    variant: str = "vanilla"
    # vocabulary sizes, label count and special ids: filled from the shards' manifest
    # (the trainer overwrites them), not knobs; the ids default to synprep's layout
    src_vocab: int = setting(0, ge=0)
    tgt_vocab: int = setting(0, ge=0)  # target pieces; transition variants add 2 arc tokens per label
    n_labels: int = setting(0, ge=0)
    pad_id: int = setting(0, ge=0)
    bos_id: int = setting(2, ge=0)
    eos_id: int = setting(3, ge=0)  # also END of transition sequences
    # Transformer base (Vaswani et al., 2017)
    # (upper bounds: far above any model of the papers, below what overflows a size in torch)
    d_model: int = setting(512, ge=1, le=65536)
    n_heads: int = setting(8, ge=1, le=1024)
    enc_layers: int = setting(6, ge=1, le=1024)
    dec_layers: int = setting(6, ge=1, le=1024)
    d_ff: int = setting(2048, ge=1, le=1 << 20)
    # residual/embedding dropout of Transformer base
    dropout: float = setting(0.1, ge=0, lt=1)
    # dropout on attention probabilities: 0 as in fairseq's transformer defaults
    attn_dropout: float = setting(0.0, ge=0, lt=1)
    # pre-norm (LayerNorm before each sublayer): trains without a long warm-up and is
    # stabler on small data; false gives the paper's post-norm
    norm_first: bool = True
    # tie the decoder's input and output embeddings (Press & Wolf, 2017), as Transformer
    # base does; source and target vocabularies are separate sentencepiece models
    tie_output: bool = True
    # rows of the sinusoidal position table (longest sequence the model accepts); at
    # most 65,536: the table is built whole (max_len x d_model floats)
    max_len: int = setting(1024, ge=8, le=65536)
    pascal: PascalConfig = field(default_factory=PascalConfig)
    gps: GPSConfig = field(default_factory=GPSConfig)
    sa: SAConfig = field(default_factory=SAConfig)
    gcn: GCNConfig = field(default_factory=GCNConfig)
    parent: ParentConfig = field(default_factory=ParentConfig)
    prefix: PrefixConfig = field(default_factory=PrefixConfig)
    # the sub-configs that variants declare in their own module (a Variant's options
    # naming a Config class that is no field above; synprep.models.specs.option_groups):
    # key -> config, read and shown after the fields above as if they were fields
    # (``model.<key>.<option>``, ``cfg.<key>``), each with its defaults when not given
    groups: dict = field(default_factory=lambda: _group_defaults(), repr=False, metadata={"internal": True})

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        from .specs import option_groups  # lazy: a cycle (the declarations import this module)

        where = where or cls.__name__
        data = dict(data or {})
        given = {key: data.pop(key) for key in option_groups() if key in data}
        cfg = super().from_dict(data, where)
        if not given:
            return cfg
        groups = {key: _coerce(given.get(key, {}), kind, f"{where}.{key}") for key, kind in option_groups().items()}
        try:
            return dataclasses.replace(cfg, groups=groups)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(d.pop("groups"))
        return d

    def __getattr__(self, name: str):
        groups = self.__dict__.get("groups") or {}
        if name in groups:
            return groups[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __post_init__(self):
        require(
            self.d_model % self.n_heads == 0,
            f"d_model = {self.d_model} is not divisible by n_heads = {self.n_heads}",
        )
        # each sub-config's bounds that involve the model's sizes (its check_model)
        for sub in [getattr(self, f.name) for f in dataclasses.fields(self)] + list(self.groups.values()):
            check = getattr(sub, "check_model", None)
            if check is not None:
                check(self)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def _group_defaults() -> dict:
    from .specs import option_groups  # lazy: a cycle (the declarations import this module)

    return {key: kind() for key, kind in option_groups().items()}


#: paper sizes; a preset is a dict merged under the user's model config
PRESETS: dict[str, dict[str, Any]] = {
    # Transformer base (Vaswani et al., 2017); also PASCAL's transformer_wmt_en_de
    "base": dict(d_model=512, n_heads=8, enc_layers=6, dec_layers=6, d_ff=2048),
    # the tree decoder paper's medium and large models (000 §5 "Model": embedding size
    # 256 (512), 4 (6) encoder and decoder blocks, 8 heads; the feed-forward size is not
    # reported: 4 x d as in Transformer base), with the paper's 2 residual GCN layers and
    # exact prefixes (003 §3, footnote 3)
    "tree-medium": dict(d_model=256, n_heads=8, enc_layers=4, dec_layers=4, d_ff=1024, gcn={"layers": 2}, prefix={"mode": "exact"}),
    "tree-large": dict(d_model=512, n_heads=8, enc_layers=6, dec_layers=6, d_ff=2048, gcn={"layers": 2}, prefix={"mode": "exact"}),
    # a CPU-sized model for Multi30k-scale runs (bench/learn.py)
    "small": dict(d_model=256, n_heads=4, enc_layers=3, dec_layers=3, d_ff=1024),
    # the CPU table's size (config/table/cpu.yaml, docs/models.md "The table"): between
    # tiny (d 32, does not translate) and small (the whole table would take 30+ CPU-hours)
    "table": dict(d_model=128, n_heads=4, enc_layers=3, dec_layers=3, d_ff=512),
    # tests and smoke runs
    "tiny": dict(d_model=32, n_heads=4, enc_layers=2, dec_layers=2, d_ff=64, dropout=0.0, max_len=512),
}

