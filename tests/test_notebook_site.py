"""webgrad.web.notebook's offline Pyodide folder for JupyterLite: the lock file entries it writes for
pure-Python wheels (dependencies as Pyodide sees them), the missing-wheel checks. The site itself
runs in tests/browser/test_notebook.py."""
import hashlib
import json
import zipfile

import pytest

from webgrad.web.notebook import KERNEL_WHEELS, PRELOAD, lock_entry, pyodide_folder, wheels_missing


def make_wheel(folder, name, version, requires=(), files=None):
    """A minimal pure-Python wheel named as PyPI's are (``name`` with underscores)."""
    stem = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{stem}-py3-none-any.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{stem}.dist-info/METADATA", meta)
        for file, text in (files or {f"{name.replace('-', '_')}/__init__.py": ""}).items():
            z.writestr(file, text)
    return path


def fake_pyodide(folder):
    folder.mkdir()
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide.js"):
        (folder / name).write_text(name)
    info = {"arch": "wasm32", "python": "3.14.2"}
    (folder / "pyodide-lock.json").write_text(json.dumps({"info": info, "packages": {"numpy": {}}}))
    return folder


def test_lock_entry_keeps_the_dependencies_pyodide_needs(tmp_path):
    wheel = make_wheel(tmp_path, "Some_Tool", "1.2.0", requires=[
        "prompt_toolkit<3.1,>=3.0.41", "pexpect>4.6; sys_platform != 'emscripten'", "colorama; sys_platform == 'win32'",
        "pytest; extra == 'test'", "typing-extensions; python_version < '3.12'", "wcwidth"],
        files={"some_tool/__init__.py": "", "some_tool/x.py": "", "helper.py": ""})
    entry = lock_entry(wheel)
    assert entry["name"] == "some-tool" and entry["version"] == "1.2.0" and entry["file_name"] == wheel.name
    assert entry["depends"] == ["prompt-toolkit", "wcwidth"]
    assert entry["imports"] == ["helper", "some_tool"]
    assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert (entry["install_dir"], entry["package_type"]) == ("site", "package")


def test_top_level_txt_names_the_imports(tmp_path):
    wheel = make_wheel(tmp_path, "pygments", "2.20.0", files={"pygments/__init__.py": "",
                                                              "pygments-2.20.0.dist-info/top_level.txt": "pygments\n"})
    assert lock_entry(wheel)["imports"] == ["pygments"]


def test_pyodide_folder_lists_only_the_given_wheels(tmp_path):
    pyodide = fake_pyodide(tmp_path / "npm")
    wheels = [make_wheel(tmp_path, "a", "1.0", requires=["b>=2"]), make_wheel(tmp_path, "b", "2.0")]
    out = pyodide_folder(tmp_path / "out", pyodide, wheels)
    lock = json.loads((out / "pyodide-lock.json").read_text())
    assert lock["info"] == {"arch": "wasm32", "python": "3.14.2"}
    assert sorted(lock["packages"]) == ["a", "b"] and lock["packages"]["a"]["depends"] == ["b"]
    assert all((out / e["file_name"]).is_file() for e in lock["packages"].values())
    assert (out / "pyodide.asm.wasm").read_text() == "pyodide.asm.wasm"


def test_pyodide_folder_refuses_a_missing_dependency(tmp_path):
    pyodide = fake_pyodide(tmp_path / "npm")
    with pytest.raises(SystemExit, match="'c': 'a'"):
        pyodide_folder(tmp_path / "out", pyodide, [make_wheel(tmp_path, "a", "1.0", requires=["c"])])


def test_wheels_missing_matches_names_as_pip_writes_them(tmp_path):
    make_wheel(tmp_path, "prompt-toolkit", "3.0.52")
    make_wheel(tmp_path, "comm", "0.2.2")
    assert wheels_missing(tmp_path, ("prompt-toolkit==3.0.52", "comm==0.2.3", "jedi==0.19.2")) == \
        ["comm==0.2.3", "jedi==0.19.2"]


def test_the_kernels_start_up_packages_are_pinned_and_preloaded():
    names = {spec.split("==")[0] for spec in KERNEL_WHEELS}
    assert all("==" in spec for spec in KERNEL_WHEELS)
    assert set(PRELOAD) <= names and {"micropip", "ipython", "comm", "jedi"} <= set(PRELOAD)
