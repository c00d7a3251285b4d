"""The model config: the Transformer's own settings (the trunk), its variant, and that
variant's settings -- none of another's.

A variant's settings are declared with the variant (its module in
:mod:`synprep.models.specs`: ``PascalConfig`` beside ``pascal``); :meth:`ModelConfig.from_dict`
reads the trunk's keys, then ``model.<key>`` for each of the variant's ``options``
(strictly: unknown keys and wrong types are errors by key path), each with its defaults
where it is not given, and checks each against the trunk's sizes (its ``check_model``:
``pascal.heads <= n_heads``) -- only the variant's own, so that a vanilla model with one
head, or with ``d_model = 8``, is a valid model. A section of another variant
(``model.gcn`` under ``variant: vanilla``: a preset or a shared run file gives it to every
variant) is read as strictly and left out: the config, ``--print-config``, config.json
and a checkpoint hold the trunk and the variant's own settings. A checkpoint written
before (with every variant's sections) therefore loads as the same config.

The model reads its settings typed: ``cfg.option(PascalConfig).heads``. Sizes come from
:data:`PRESETS`; the vocabulary sizes and the label count are not knobs -- the trainer
fills them from the shards' manifest. The base (frozen, strict, bounds beside each
setting) is :mod:`synprep.settings`, every unit's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, TypeVar

from ..errors import ConfigError
from ..settings import INTERNAL, Config, require, setting
from .specs import Variant, declared, option_keys

__all__ = ["ModelConfig", "PRESETS", "MAX_POSITIONS"]

#: the most rows a position table may have (``model.max_len``): it is built whole
#: (max_len x d_model floats), and every length a model reads or a search writes fits in it
MAX_POSITIONS = 65536

C = TypeVar("C", bound=Config)


@dataclass(frozen=True)
class ModelConfig(Config):
    """The encoder-decoder Transformer, its variant and the variant's settings (module
    doc). Defaults: Transformer base."""

    # which model: a declared variant (synprep.models.specs; docs/models.md's table);
    # vanilla, the Transformer, is the baseline every comparison needs
    variant: str = setting("vanilla", listed=lambda: sorted(declared()))
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
    # most 65,536 (MAX_POSITIONS): the table is built whole (max_len x d_model floats)
    max_len: int = setting(1024, ge=8, le=MAX_POSITIONS)
    # the variant's settings (its declaration's options, key -> config): read as
    # model.<key>, each with its defaults where not given (filled when the config is
    # made); not a key of its own
    options: Mapping[str, Config] = field(default_factory=dict, metadata=INTERNAL)

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        where = where or "model"
        data = dict(data or {})
        spec = _variant(data.get("variant", cls.variant), where)
        every = option_keys()
        unknown = sorted(k for k in data if k not in every and not cls._is_trunk(k))
        if unknown:
            known = [f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")] + list(spec.options)
            raise ConfigError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                              f"known keys: {', '.join(sorted(known))}")
        options = {}
        for key, kind in every.items():
            if key in data:
                value = _read(kind, data.pop(key), f"{where}.{key}")  # another variant's: read, then left out
                if key in spec.options:
                    options[key] = value
        return cls._make(cls.read_fields(data, where), where, options=options)

    @classmethod
    def _is_trunk(cls, key: str) -> bool:
        return any(f.name == key and not f.metadata.get("internal") for f in dataclasses.fields(cls))

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(d.pop("options"))
        return d

    def __post_init__(self):
        require(
            self.d_model % self.n_heads == 0,
            f"d_model = {self.d_model} is not divisible by n_heads = {self.n_heads}",
        )
        spec = _variant(self.variant, "model")
        extra = sorted(set(self.options) - set(spec.options))
        require(not extra, f"variant {self.variant!r} has no settings {', '.join(extra)} "
                           f"(it reads: {', '.join(spec.options) or 'none'})")
        options = {}
        for key, kind in spec.options.items():
            value = self.options.get(key)
            if value is None:
                value = kind()
            elif not isinstance(value, kind):
                raise ConfigError(f"{key} = {value!r}: expected a {kind.__name__} (variant {self.variant!r})")
            options[key] = value
        object.__setattr__(self, "options", options)  # frozen: filled once, while it is made
        for sub in options.values():  # each setting's bounds that involve the trunk's sizes
            check = getattr(sub, "check_model", None)
            if check is not None:
                check(self)

    def option(self, kind: type[C]) -> C:
        """The variant's settings of class ``kind`` (``cfg.option(PascalConfig).heads``);
        a ConfigError when the variant reads none of that class."""
        for value in self.options.values():
            if type(value) is kind:
                return value
        raise ConfigError(f"variant {self.variant!r} has no {kind.__name__} settings "
                          f"(it reads: {', '.join(self.options) or 'none'})")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def _variant(name: Any, where: str) -> Variant:
    """The declaration of variant ``name``; a ConfigError naming the key and the known ones."""
    table = declared()
    if isinstance(name, str) and name in table:
        return table[name]
    raise ConfigError(f"{where}.variant = {name!r}: unknown variant; known: {', '.join(sorted(table))}")


def _read(kind: type, value: Any, where: str) -> Config:
    if isinstance(value, kind):
        return value
    if not isinstance(value, dict):
        raise ConfigError(f"{where} = {value!r}: expected a mapping of {kind.__name__} keys")
    return kind.from_dict(value, where)


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
    # the CPU table's size (config/table/cpu.yaml, docs/table.md): between
    # tiny (d 32, does not translate) and small (the whole table would take 30+ CPU-hours)
    "table": dict(d_model=128, n_heads=4, enc_layers=3, dec_layers=3, d_ff=512),
    # tests and smoke runs
    "tiny": dict(d_model=32, n_heads=4, enc_layers=2, dec_layers=2, d_ff=64, dropout=0.0, max_len=512),
}

