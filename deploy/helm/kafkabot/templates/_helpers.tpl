{{/*
kafkabot.fullname: name of the bot's namespaced objects (deploy/base's
"kafka-bot" unless fullnameOverride says otherwise).
*/}}
{{- define "kafkabot.fullname" -}}
{{- default "kafka-bot" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* kafkabot.selectorLabels: what the Deployment, PDB, Service and NetworkPolicy select. */}}
{{- define "kafkabot.selectorLabels" -}}
app.kubernetes.io/name: kafkabot
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* kafkabot.labels: on every object the chart renders from a template. */}}
{{- define "kafkabot.labels" -}}
{{ include "kafkabot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* kafkabot.secretName: the Secret the bot reads its tokens from. */}}
{{- define "kafkabot.secretName" -}}
{{- if .Values.secret.create -}}
{{ include "kafkabot.fullname" . }}
{{- else -}}
{{ .Values.existingSecret }}
{{- end -}}
{{- end -}}

{{/*
kafkabot.image: repository@digest. A tag only with image.allowMutableTag;
otherwise a missing digest fails the install here, before anything is created.
*/}}
{{- define "kafkabot.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{- if eq $img.digest "sha256:0000000000000000000000000000000000000000000000000000000000000000" -}}
{{- fail "image.digest is the all-zero placeholder of an unreleased checkout: set image.digest to the digest the image build printed" -}}
{{- end -}}
{{ $img.repository }}@{{ $img.digest }}
{{- else if and $img.allowMutableTag $img.tag -}}
{{ $img.repository }}:{{ $img.tag }}
{{- else -}}
{{- fail "image.digest is required (sha256:<64 hex>, as printed by the image build): a digest names one image, a tag can be re-pointed. To run a tag anyway, set image.tag and image.allowMutableTag=true" -}}
{{- end -}}
{{- end -}}

{{/*
kafkabot.validate: checks that need more than the schema. Included once, by
the ConfigMap, so every check runs on every render.
*/}}
{{- define "kafkabot.validate" -}}
{{- $ := . -}}
{{- $seen := dict -}}
{{- range .Values.kafkaNamespaces -}}
{{- if hasKey $seen . -}}
{{- fail (printf "kafkaNamespaces lists %q twice" .) -}}
{{- end -}}
{{- $_ := set $seen . true -}}
{{- if eq . $.Release.Namespace -}}
{{- fail (printf "kafkaNamespaces lists the release namespace %q: install the bot in a namespace of its own (its Role there would meet the Kafka Role of the same name)" .) -}}
{{- end -}}
{{- end -}}
{{- /*
Installing into a cluster (lookup answers only then: the release namespace
exists), every Kafka namespace must exist too, or the install would stop
half-way at the first Role there. helm template and lint skip this.
*/ -}}
{{- if lookup "v1" "Namespace" "" .Release.Namespace -}}
{{- $missing := list -}}
{{- range .Values.kafkaNamespaces -}}
{{- if not (lookup "v1" "Namespace" "" .) -}}
{{- $missing = append $missing . -}}
{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "kafkaNamespaces: namespace %s not found in this cluster; create it or fix the list (nothing was installed)" (join ", " $missing)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.secret.create .Values.existingSecret -}}
{{- fail "set either existingSecret (a Secret you created) or secret.create=true (the chart creates it from secret.values), not both" -}}
{{- end -}}
{{- if and (not .Values.secret.create) (not .Values.existingSecret) -}}
{{- fail "the bot needs its Slack tokens: set existingSecret to the name of your Secret, or secret.create=true with secret.values" -}}
{{- end -}}
{{- if .Values.secret.create -}}
{{- $v := .Values.secret.values -}}
{{- if not (and $v.slackAppToken $v.slackBotToken $v.approvalSecret) -}}
{{- fail "secret.create=true needs secret.values.slackAppToken, slackBotToken and approvalSecret" -}}
{{- end -}}
{{- if lt (len $v.approvalSecret) 32 -}}
{{- fail "secret.values.approvalSecret must be at least 32 bytes (e.g. head -c 48 /dev/urandom | base64)" -}}
{{- end -}}
{{- if and .Values.alertmanager.enabled (not $v.alertmanagerToken) -}}
{{- fail "alertmanager.enabled with secret.create=true needs secret.values.alertmanagerToken (at least 16 bytes)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.alertmanager.enabled (not .Values.slack.alertChannel) -}}
{{- fail "alertmanager.enabled needs slack.alertChannel: the receiver posts its alerts there" -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled (not .Values.service.enabled) -}}
{{- fail "serviceMonitor.enabled needs service.enabled: the ServiceMonitor scrapes the Service" -}}
{{- end -}}
{{- if and .Values.alertmanager.enabled (not .Values.service.enabled) -}}
{{- fail "alertmanager.enabled needs service.enabled: Alertmanager reaches the receiver through the Service" -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.apiServer.cidrs) -}}
{{- fail "networkPolicy.enabled needs networkPolicy.apiServer.cidrs (the API server's addresses: kubectl get endpoints kubernetes -n default); without them the bot could not reach the API server" -}}
{{- end -}}
{{- range $k, $_ := .Values.extraConfig -}}
{{- if has $k (list "SLACK_APP_TOKEN" "SLACK_BOT_TOKEN" "APPROVAL_SECRET" "ALERTMANAGER_TOKEN") -}}
{{- fail (printf "extraConfig.%s is a secret: a ConfigMap is readable by anyone who may read ConfigMaps; put it in the Secret (existingSecret or secret.values)" $k) -}}
{{- end -}}
{{- if has $k (list "KAFKA_NAMESPACES" "KAFKA_POD_SELECTOR" "CLUSTER_NAME" "ALERT_CHANNEL" "APPROVERS" "APPROVAL_CHANNELS" "SWEEP_SCHEDULE" "LOG_LEVEL" "LOG_FORMAT" "ALLOW_ROOT_BROKER" "POD_NAMESPACE" "POD_NAME") -}}
{{- fail (printf "extraConfig.%s has a value of its own in values.yaml (or is set by the chart): set that instead" $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
