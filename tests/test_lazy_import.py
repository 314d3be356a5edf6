"""`import ssdlab` loads only the native core; each public name loads its module when first used
(issue 18: a short `ssdlab run` should not pay for plotting, comparison or the NBD server)."""

import subprocess
import sys

import pytest
import ssdlab


def python(code: str) -> str:
    """What `code` prints in a fresh interpreter (nothing imported before it)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_import_ssdlab_leaves_the_heavy_modules_unloaded():
    code = (
        "import sys, ssdlab\n"
        "heavy = [m for m in ('pydantic', 'ssdlab.results', 'ssdlab.live', 'ssdlab.compare',"
        " 'ssdlab.report', 'matplotlib', 'pandas') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    assert python(code).strip() == ""


@pytest.mark.parametrize("name", ssdlab.__all__)
def test_every_public_name_resolves(name):
    value = getattr(ssdlab, name)
    assert value is not None
    assert name in dir(ssdlab)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'simulat'"):
        ssdlab.simulat  # noqa: B018


def test_from_import_gives_the_defining_modules_objects():
    from ssdlab import Results, simulate
    from ssdlab.api import simulate as api_simulate
    from ssdlab.results import Results as results_Results

    assert simulate is api_simulate
    assert Results is results_Results


def test_a_function_named_as_its_submodule_stays_the_function():
    # `ssdlab.analytic` and `ssdlab.compare` are functions defined in submodules of the same
    # names; importing a submodule first must not leave the package's name bound to the module.
    code = (
        "import ssdlab.analytic, ssdlab.compare, types, ssdlab\n"
        "from ssdlab.analytic import AnalyticModel\n"
        "print(callable(ssdlab.analytic), callable(ssdlab.compare),"
        " isinstance(ssdlab.analytic, types.ModuleType), AnalyticModel.__name__)\n"
    )
    assert python(code).split() == ["True", "True", "False", "AnalyticModel"]
