"""Request and response shapes of Beacon's routes (the report layout is documented here for /docs)."""

from rest_framework import serializers

from . import constants


class BeaconCheckStartIn(serializers.Serializer):
    url = serializers.CharField(max_length=2048, help_text="The public http(s) address of the site, e.g. https://example.com/.")


class BeaconEvidenceOut(serializers.Serializer):
    url = serializers.CharField()
    status = serializers.IntegerField(allow_null=True, help_text="HTTP status, null when the fetch failed.")
    excerpt = serializers.CharField(required=False, help_text="A short excerpt of what came back.")
    error = serializers.CharField(required=False)
    note = serializers.CharField(required=False)


class BeaconFixOut(serializers.Serializer):
    text = serializers.CharField(help_text="What to change.")
    snippet = serializers.CharField(allow_blank=True, help_text="The lines to add: robots lines, an llms.txt skeleton, card JSON, a header.")


class BeaconCheckResultOut(serializers.Serializer):
    id = serializers.ChoiceField(choices=[c.id for c in constants.CHECKS])
    category = serializers.ChoiceField(choices=list(constants.CATEGORIES))
    title = serializers.CharField()
    judged_by_model = serializers.BooleanField()
    weight = serializers.IntegerField(help_text="1 to 3: how much the check counts in its category.")
    status = serializers.ChoiceField(choices=list(constants.VERDICTS), help_text="not_applicable and error count for nothing either way.")
    points = serializers.FloatField(allow_null=True, help_text="pass 1, partial 0.5, fail 0; null when not counted.")
    summary = serializers.CharField()
    evidence = BeaconEvidenceOut(many=True)
    fix = BeaconFixOut(allow_null=True)
    details = serializers.DictField()


class BeaconScoresOut(serializers.Serializer):
    overall = serializers.IntegerField(allow_null=True, help_text="Mean of the category scores that exist.")
    find = serializers.IntegerField(allow_null=True, help_text="0-100: 100 × Σ(weight × points) / Σ(weight) over counted checks.")
    read = serializers.IntegerField(allow_null=True)
    use = serializers.IntegerField(allow_null=True)


class BeaconSuggestionOut(serializers.Serializer):
    check = serializers.CharField()
    category = serializers.CharField()
    impact = serializers.FloatField(help_text="weight × points lost; suggestions come highest first.")
    title = serializers.CharField()
    text = serializers.CharField()
    snippet = serializers.CharField(allow_blank=True)


class BeaconReportOut(serializers.Serializer):
    url = serializers.CharField()
    scanned_at = serializers.DateTimeField()
    seconds = serializers.FloatField()
    requests_made = serializers.IntegerField(help_text="Requests sent to the site (redirect hops included).")
    request_budget = serializers.IntegerField()
    judge = serializers.CharField(help_text="'embedded' or 'chat' (an OpenAI-compatible model).")
    scores = BeaconScoresOut()
    checks = BeaconCheckResultOut(many=True)
    suggestions = BeaconSuggestionOut(many=True)
    requests = serializers.ListField(child=serializers.DictField(), help_text="Every request sent: method, url, status, error, elapsed.")
    user_agent = serializers.CharField()


class BeaconCheckOut(serializers.Serializer):
    id = serializers.CharField(help_text="bcn_ followed by 16 characters.")
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=list(constants.STATES), help_text="; ".join(f"{k}: {v}" for k, v in constants.STATE_MEANINGS.items()))
    status_url = serializers.CharField()
    report_url = serializers.CharField(help_text="The report page for people (HTML).")
    checkout_url = serializers.CharField(allow_null=True, help_text="The card payment page ($5, Stripe Checkout) while the check is awaiting_payment; null once paid or when the check is free.")
    paid_by = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    report = BeaconReportOut(allow_null=True)


class BeaconSavedOut(serializers.Serializer):
    id = serializers.CharField(help_text="The check's id.")
    url = serializers.CharField()
    status = serializers.CharField()
    saved_at = serializers.DateTimeField()
    scores = BeaconScoresOut(allow_null=True)
    status_url = serializers.CharField()


class BeaconSavedListOut(serializers.Serializer):
    saved = BeaconSavedOut(many=True)
