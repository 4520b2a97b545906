"""tests/helpers/cleanup.py: the first failure is the one the tests show; the clean-up's come after it, as notes."""
import pytest

from tests.helpers.cleanup import cleaned_up


def timed_out(what: str):
    def step():
        raise AssertionError(f"timed out after 120s waiting for {what}")
    return step


class TestCleanedUp:
    def test_should_raise_the_set_up_failure_with_the_clean_up_failures_as_notes(self):
        ran = []
        with pytest.raises(AssertionError) as raised:
            with cleaned_up(timed_out("gpt-oss-2xh100-truss deleted"), lambda: ran.append("loops stopped")):
                raise AssertionError("timed out after 240s waiting for gpt-oss-2xh100-truss: Synced")
        assert str(raised.value) == "timed out after 240s waiting for gpt-oss-2xh100-truss: Synced"
        assert raised.value.__notes__ == [
            "then, cleaning up: AssertionError: timed out after 120s waiting for gpt-oss-2xh100-truss deleted"]
        assert ran == ["loops stopped"]

    def test_should_raise_the_first_clean_up_failure_after_a_block_that_passed(self):
        with pytest.raises(AssertionError) as raised:
            with cleaned_up(timed_out("namespace a deleted"), timed_out("namespace b deleted")):
                pass
        assert str(raised.value) == "timed out after 120s waiting for namespace a deleted"
        assert raised.value.__notes__ == [
            "then, cleaning up: AssertionError: timed out after 120s waiting for namespace b deleted"]

    def test_should_run_every_step_and_raise_nothing_when_all_pass(self):
        ran = []
        with cleaned_up(lambda: ran.append(1), lambda: ran.append(2)):
            ran.append(0)
        assert ran == [0, 1, 2]

    def test_should_keep_a_skip_of_the_set_up(self):
        ran = []
        with pytest.raises(pytest.skip.Exception, match="Argo CD is not built"):
            with cleaned_up(lambda: ran.append("stopped")):
                pytest.skip("Argo CD is not built")
        assert ran == ["stopped"]
