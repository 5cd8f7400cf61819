"""Local image data of VLM tasks: checks before model time (exit-2 errors naming the file), the image protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlgate._core.errors import InputError
from rlgate.contract.models import ImageProtocol, Protocol
from rlgate.harness.lmeval.images import check_images, load_images, resize, select_mmmu_subject
from rlgate.harness.lmeval.vlm_checks import refuse_text_backend

Image = pytest.importorskip("PIL.Image")


def _png(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(path)
    return path


def test_good_images_are_counted(tmp_path: Path) -> None:
    _png(tmp_path / "images" / "a.png")
    docs = [{"image": "images/a.png", "query": "q"}] * 3
    assert check_images("chartqa", ["image"], docs, tmp_path, "data.jsonl", "f") == 3


def test_missing_image_names_row_file_and_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        check_images("chartqa", ["image"], [{"image": "images/nope.png"}], tmp_path, "d/test.jsonl", "f")
    text = str(err.value)
    assert "nope.png" in text and "does not exist" in text and "relative to the data file" in err.value.fix
    assert err.value.file is not None and "test.jsonl" in str(err.value.file)


def test_corrupt_image(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nthis is not a png")
    with pytest.raises(InputError, match="corrupt or not an image"):
        check_images("chartqa", ["image"], [{"image": "bad.png"}], tmp_path, "t.jsonl", "f")


def test_image_column_absent(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no image column 'image'") as err:
        check_images("chartqa", ["image"], [{"picture": "a.png", "query": "q"}], tmp_path, "t.jsonl", "f")
    assert "rename" in err.value.fix


def test_text_backend_refused_for_image_task() -> None:
    with pytest.raises(InputError, match="takes images") as err:
        refuse_text_backend(Protocol(backend="hf"), ["chartqa"])
    assert "hf-multimodal" in err.value.fix
    refuse_text_backend(Protocol(backend="hf-multimodal"), ["chartqa"])  # fine


def test_image_protocol_resizes_as_declared() -> None:
    image = Image.new("RGB", (400, 100))
    assert resize(image, ImageProtocol(image_resolution=200)).size == (200, 50)
    assert resize(image, ImageProtocol(image_resolution=200, preserve_aspect_ratio=False)).size == (200, 200)
    capped = resize(image, ImageProtocol(max_pixels=10_000)).size
    assert capped[0] * capped[1] <= 10_000 and abs(capped[0] / capped[1] - 4) < 0.1
    assert resize(image, ImageProtocol()).size == (400, 100)


def test_load_images_decodes_or_passes_references(tmp_path: Path) -> None:
    _png(tmp_path / "a.png", (300, 100))
    doc = {"image": "a.png"}
    loaded = load_images(["image"], str(tmp_path), {"image_resolution": 150}, True, doc)
    image = loaded[0].load()  # live runs: decoded only when the backend needs the pixels
    assert image.size == (150, 50) and image.mode == "RGB"
    assert load_images(["image"], str(tmp_path), {}, False, doc) == ["a.png"]


def test_lazy_images_hash_like_decoded_ones_and_decode_per_chunk(tmp_path: Path) -> None:
    from lm_eval.api.instance import Instance

    from rlgate.harness.lmeval.caching_lm import request_hash
    from rlgate.harness.lmeval.images import LazyImage, has_lazy_images, materialize

    _png(tmp_path / "a.png", (300, 100))
    lazy = load_images(["image"], str(tmp_path), {"image_resolution": 150}, True, {"image": "a.png"})
    assert isinstance(lazy[0], LazyImage) and repr(lazy[0]) == "<image a.png>"
    decoded = [lazy[0].load()]
    args = ("<image>q", {"until": []}, {"visual": lazy})
    # the cache key is the pixels' (a cache written before images were lazy still answers)
    assert request_hash("generate_until", args) == request_hash("generate_until", (*args[:2], {"visual": decoded}))
    assert has_lazy_images(args) and not has_lazy_images(materialize(args))
    assert materialize(args)[2]["visual"][0].tobytes() == decoded[0].tobytes()
    inst = Instance("generate_until", {}, args, 0, ("chartqa", 3, 1))
    assert has_lazy_images(inst.arguments) and inst.doc_id == 3


def test_mmmu_subject_selection() -> None:
    datasets = pytest.importorskip("datasets")
    rows = [{"id": "validation_Art_Theory_1"}, {"id": "validation_Art_1"}, {"id": "validation_Math_2"}]
    ds = datasets.Dataset.from_list(rows)
    assert [r["id"] for r in select_mmmu_subject("Art", ds)] == ["validation_Art_1"]
    assert [r["id"] for r in select_mmmu_subject("Art_Theory", ds)] == ["validation_Art_Theory_1"]


def test_generated_rows_reference_existing_images(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from rlgate.demo.vlm_data import write_vlm_data

    counts = write_vlm_data(tmp_path, chartqa_charts=2, mmmu_per_subject=1, mathvista=2)
    assert counts.chartqa == 8 and counts.mmmu == 30 and counts.mathvista == 2
    for key, column in (("chartqa", "image"), ("mmmu", "image_1"), ("mathvista", "image")):
        file = counts.files[key]
        docs = [json.loads(line) for line in file.read_text().splitlines()]
        assert check_images(key, [column], docs, file.parent, str(file), "f") == len(docs)
    row = json.loads(counts.files["chartqa"].read_text().splitlines()[0])
    assert row["query"].startswith("What is the value of ")  # answers computed from the drawn table
    series, category = row["query"].removeprefix("What is the value of ").rstrip("?").split(" in ")
    assert row["label"] == [str(row["table"][series][category])]


def test_caching_lm_decodes_images_one_chunk_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lm-eval builds every request up front; the backend gets decoded copies, IMAGE_CHUNK at a time."""
    from lm_eval.api.instance import Instance
    from lm_eval.api.model import LM

    from rlgate.harness.lmeval import caching_lm
    from rlgate.harness.lmeval.images import LazyImage
    from rlgate.store.cache import GenerationCache

    monkeypatch.setattr(caching_lm, "IMAGE_CHUNK", 4)
    for n in range(10):
        _png(tmp_path / f"{n}.png", (40 + n, 30))
    calls: list[list[tuple[int, int]]] = []

    class Backend(LM):
        def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
            calls.append([r.args[2]["visual"][0].size for r in requests])  # PIL images, not LazyImages
            return [f"w={r.args[2]['visual'][0].size[0]}" for r in requests]

        def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError

    insts = [Instance("generate_until", {}, ("<image>q", {"until": []}, {"visual": load_images(
        ["image"], str(tmp_path), {}, True, {"image": f"{n}.png"})}), 0, ("chartqa", n, 1)) for n in range(10)]
    with GenerationCache(tmp_path / "cache.sqlite") as cache:
        lm = caching_lm.CachingLM(Backend, cache=cache, fingerprint="f", protocol_hash="p",
                                  task_hashes={"chartqa": "t"})
        assert lm.generate_until(insts) == [f"w={40 + n}" for n in range(10)]
    assert [len(c) for c in calls] == [4, 4, 2]
    assert all(isinstance(i.args[2]["visual"][0], LazyImage) for i in insts)  # lm-eval's requests stay light
