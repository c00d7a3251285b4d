"""synprep.util.device: the one place that turns a device name into a torch device (train,
translate, evaluate, the analysis dumps and the stanza parser all call it)."""

from __future__ import annotations

import pytest
import torch

from synprep.errors import ConfigError


def test_device_names_and_their_errors():
    from synprep.util.device import choose_device, cuda_wanted

    assert choose_device("cpu") == torch.device("cpu")
    auto = choose_device("auto")
    assert auto.type == ("cuda" if torch.cuda.is_available() else "cpu") and choose_device(None) == auto
    assert cuda_wanted("auto") == torch.cuda.is_available() and not cuda_wanted("cpu") and cuda_wanted("cuda:0")
    for bad, why in (("tpu", "unknown device"), ("cuda:x", "cuda:N"), ("gpu", "expected auto, cpu, cuda or cuda:N")):
        with pytest.raises(ConfigError, match=why) as e:
            choose_device(bad, "train.device")
        assert str(e.value).startswith(f"train.device = {bad!r}")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ConfigError, match="no CUDA device" if not n else "does not exist"):
        choose_device(f"cuda:{n}")


def test_translate_asks_the_one_owner(tmp_path, capsys):
    """The error names translate's option (before, train's own copy said train.device)."""
    from synprep.cli import main

    assert main(["translate", "--checkpoint", "x.pt", "--data", "d", "--out", str(tmp_path / "o"), "--device", "tpu"]) == 2
    assert "--device = 'tpu': unknown device" in capsys.readouterr().err
