"""Which reads of a running total a Python float could change (`use_needing_tensor`): GF208 offers `.item()`
only when none does, `.detach()` otherwise."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from gradfix.analysis.expressions import code_of, use_needing_tensor
from gradfix.analysis.fileindex import FileIndex


def first_use(body: str, returns_ok: bool = False) -> str | None:
    src = "def step(batches, log, hist, obj):\n    total = 0.0\n" + textwrap.indent(textwrap.dedent(body), "    ")
    index = FileIndex(cst.MetadataWrapper(cst.parse_module(src), unsafe_skip_copy=True))
    fn = index.module.body[0]
    use = use_needing_tensor(index.parents, fn, "total", returns_ok=returns_ok)
    if use is None:
        return None
    stmt = use
    while not isinstance(stmt, cst.BaseSmallStatement):
        stmt = index.parents[stmt]
    return code_of(stmt)


@pytest.mark.parametrize("body", [
    "total += 1\nprint(total)\n",
    "total += 1\nprint(f'{total:.3f} {total / 4:.2f}')\n",
    "total += 1\nprint('%.4f' % (total / len(batches)))\n",
    "total += 1\nif total < 3 and not total > 9:\n    pass\n",
    "total += 1\nlog.info('loss %f', total)\nlog.add_scalar('loss', total / 2, 0)\n",
    "total += 1\nlog.log({'loss': total, 'n': 3})\n",
    "total += 1\navg = total / len(batches)\nprint(avg)\n",
    "total += 1\nepoch_sum = 0.0\nepoch_sum += total\nprint(round(epoch_sum, 3))\n",
    "total += 1\ntotal /= len(batches)\ntotal = total * 2\nprint(total)\n",
    "total, seen = 0.0, 0\nobj.total = 5\nlog(total=3)\n",     # bindings, another object's attribute, a keyword
    "total += 1\ntotal\n",                                     # a bare expression drops the value
])
def test_reads_a_float_serves_as_well(body):
    assert first_use(body) is None


@pytest.mark.parametrize("body, use", [
    ("total += 1\nreturn total\n", "return total"),
    ("total += 1\nreturn {'loss': total / len(batches)}\n", "return {'loss': total / len(batches)}"),
    ("total += 1\nhist.append(total)\n", "hist.append(total)"),
    ("total += 1\nobj.best = total\n", "obj.best = total"),
    ("total += 1\nhist[0] = total\n", "hist[0] = total"),
    ("total += 1\navg = total / 2\nreturn avg\n", "avg = total / 2"),          # through a name that is returned
    ("total += 1\nyield total\n", "yield total"),
    ("total += 1\nnp_total = total.cpu()\n", "np_total = total.cpu()"),
    ("total += 1\nlog.save(total)\n", "log.save(total)"),                      # not a print or logging call
])
def test_reads_that_need_the_tensor(body, use):
    assert first_use(body) == use


def test_a_return_is_fine_when_every_caller_only_prints():
    assert first_use("total += 1\nreturn total / 2\n", returns_ok=True) is None
    # still not a container or another call
    assert first_use("total += 1\nhist.append(total)\nreturn total\n", returns_ok=True) == "hist.append(total)"


def test_a_function_called_from_another_file_keeps_a_tensor(tmp_path, monkeypatch):
    from gradfix.codemods import ALL_RULES
    from gradfix.config import Config
    from gradfix.engine import Engine
    from gradfix.runner import lint_paths

    (tmp_path / "loop.py").write_text(textwrap.dedent('''\
        def run_epoch(net, batches, loss_fn, opt):
            total = 0.0
            for x, y in batches:
                loss = loss_fn(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss
            return total


        def report(net, batches, loss_fn, opt):
            print(run_epoch(net, batches, loss_fn, opt))
        '''))
    (tmp_path / "main.py").write_text("from loop import run_epoch\n\nhistory = [run_epoch(None, [], None, None)]\n")

    def fixes(*paths):
        monkeypatch.chdir(tmp_path)
        config = Config(root=str(tmp_path))
        report = lint_paths(Engine(ALL_RULES, config), list(paths), config)
        return [f.fix.description for lint in report.lints for f in lint.findings if f.rule == "GF208"]

    # main.py keeps the returned value in a list: what it does with a float is not known
    assert fixes(".") == ["accumulate `loss.detach()`"]
    # once main.py no longer calls it, the one caller left prints it
    (tmp_path / "main.py").write_text("x = 1\n")
    assert fixes(".") == ["accumulate `loss.item()`"]
