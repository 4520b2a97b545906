"""Chart.yaml: installable offline and from Git, and consistent with the image it runs."""
import yaml

from tests.helpers import CHART_DIR

CHART = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
VALUES = yaml.safe_load((CHART_DIR / "values.yaml").read_text())


def test_should_take_no_chart_dependencies():
    assert "dependencies" not in CHART
    assert not (CHART_DIR / "charts").exists()
    assert not (CHART_DIR / "Chart.lock").exists()


def test_should_name_the_default_runtime_as_app_version():
    assert CHART["appVersion"] == VALUES["dynamo"]["image"]["tag"] == "1.2.1"


def test_should_be_an_application_chart_for_helm_3_and_later():
    assert CHART["apiVersion"] == "v2"
    assert CHART["type"] == "application"
