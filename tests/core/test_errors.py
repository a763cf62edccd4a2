import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_an_unknown_route_is_a_404_envelope(client):
    response = client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json() == {"error": "No route matches /api/v1/no-such-thing."}


def test_a_wrong_method_is_a_405_envelope(alice):
    response = alice.client.put("/api/v1/me", {}, format="json")
    assert response.status_code == 405
    assert set(response.json()) == {"error"}


def test_malformed_json_is_a_400_envelope(alice):
    response = alice.client.post("/api/v1/api-keys", data=b'{"name": ', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"].startswith("The request body is not valid JSON")


def test_invalid_utf8_is_a_400_envelope(alice):
    response = alice.client.post("/api/v1/api-keys", data=b'{"name": "\xff\xfe"}', content_type="application/json")
    assert response.status_code == 400
    assert set(response.json()) == {"error"}


def test_a_json_array_instead_of_an_object_is_a_400_envelope(alice):
    response = alice.client.post("/api/v1/api-keys", data=b"[1, 2]", content_type="application/json")
    assert response.status_code == 400
    assert set(response.json()) == {"error"}


def test_an_unsupported_media_type_is_a_415_envelope(alice):
    response = alice.client.post("/api/v1/api-keys", data="name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]


def test_a_body_over_the_cap_is_a_413_envelope(alice, settings):
    settings.MAX_BODY_BYTES = 2048
    response = alice.client.post("/api/v1/api-keys", data=b'{"name": "' + b"x" * 4096 + b'"}', content_type="application/json")
    assert response.status_code == 413
    assert "2048 bytes" in response.json()["error"]


def test_every_response_carries_a_request_id_and_echoes_a_well_formed_one(client):
    generated = client.get("/api/v1/health")
    assert generated["X-Request-Id"].startswith("req_")
    echoed = client.get("/api/v1/health", HTTP_X_REQUEST_ID="trace-12345678")
    assert echoed["X-Request-Id"] == "trace-12345678"
    replaced = client.get("/api/v1/health", HTTP_X_REQUEST_ID="<script>")
    assert replaced["X-Request-Id"].startswith("req_")


@pytest.mark.urls("tests.core.crash_urls")
def test_a_crash_is_a_500_envelope_without_details(client):
    client.raise_request_exception = False
    response = client.get("/crash")
    assert response.status_code == 500
    assert response.json() == {"error": "An internal error occurred; it has been logged."}


def test_health_reports_the_database_and_redis(client, settings):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    body = response.json()
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"] == ("ok" if settings.REDIS_URL else "not configured")


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_health_is_503_when_redis_does_not_answer(client):
    response = client.get("/api/v1/health")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"] == "failing"


def test_docs_and_their_assets_are_served_by_the_service(client):
    docs = client.get("/docs")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower()
    schema = client.get("/api/v1/openapi.json")
    assert schema.status_code == 200 and schema.json()["info"]["version"] == "0.21.0"


def test_llms_txt_is_plain_text_and_explains_how_to_start(client):
    response = client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "/api/v1/signup" in response.content.decode()


def test_a_validation_message_names_the_item_of_a_list_by_position():
    from rest_framework import serializers

    from core.errors import validation_message

    class Item(serializers.Serializer):
        id = serializers.CharField()
        input = serializers.CharField()

    class Body(serializers.Serializer):
        items = Item(many=True)
        tags = serializers.ListField(child=serializers.IntegerField(), required=False)

    body = Body(data={"items": [{"id": "a", "input": "x"}, {"id": "b"}]})
    assert not body.is_valid()
    assert validation_message(body.errors) == ("items[1].input: This field is required.", "items[1].input")
    body = Body(data={"items": [{"id": "a", "input": "x"}], "tags": [1, "x"]})
    assert not body.is_valid()
    assert validation_message(body.errors)[1] == "tags[1]"
