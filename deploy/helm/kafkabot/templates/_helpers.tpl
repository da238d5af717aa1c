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
kafkabot.image: the bot's image.
- image.digest set: repository@digest (what a release pins in the packaged
  chart: hack/release.sh).
- image.tag set: repository:tag, only with image.allowMutableTag.
- neither: repository:appVersion, the release's version tag. helm template
  and helm lint render it (GitOps tools render charts so); an install against
  a cluster requires the digest (kafkabot.installChecks), so that what runs is
  exactly one image.
*/}}
{{- define "kafkabot.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{- if eq $img.digest "sha256:0000000000000000000000000000000000000000000000000000000000000000" -}}
{{- fail "image.digest is the all-zero placeholder of an unreleased checkout: set image.digest to the digest the image build printed" -}}
{{- end -}}
{{ $img.repository }}@{{ $img.digest }}
{{- else if $img.tag -}}
{{- if not $img.allowMutableTag -}}
{{- fail "image.digest is required (sha256:<64 hex>, as printed by the image build): a digest names one image, a tag can be re-pointed. To run a tag anyway, set image.tag and image.allowMutableTag=true" -}}
{{- end -}}
{{ $img.repository }}:{{ $img.tag }}
{{- else -}}
{{ $img.repository }}:{{ .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
kafkabot.clusterKnown: "true" when Helm talks to a cluster (helm install,
upgrade, template --dry-run=server): lookup answers only then. helm template
and helm lint have no cluster: lookup gives nothing and the checks that need
one are skipped, so the chart renders anywhere.
*/}}
{{- define "kafkabot.clusterKnown" -}}
{{- if lookup "v1" "Namespace" "" "kube-system" -}}true{{- end -}}
{{- end -}}

{{/*
kafkabot.installChecks: what can only be checked against the cluster the
chart is installed into (kafkabot.validate includes it; Helm renders every
template before it creates anything, so a failure here installs nothing).
- Kubernetes >= 1.30: the admission policy is admissionregistration.k8s.io/v1.
- With namespace.manage (the chart takes the release namespace over: labels
  it Pod Security restricted, keeps it on uninstall), the namespace is the
  bot's own: never default or a kube-* namespace, never one holding workloads
  of anyone else.
- The image is pinned by digest (or a tag was explicitly allowed).
*/}}
{{- define "kafkabot.installChecks" -}}
{{- if include "kafkabot.clusterKnown" . -}}
{{- if not (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "kafkabot needs Kubernetes >= 1.30 (its admission policy is a ValidatingAdmissionPolicy, admissionregistration.k8s.io/v1, GA in 1.30); this cluster runs %s. Nothing was installed" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- $ns := .Release.Namespace -}}
{{- if .Values.namespace.manage -}}
{{- if or (eq $ns "default") (hasPrefix "kube-" $ns) -}}
{{- fail (printf "refusing to install into namespace %q: the chart takes its namespace over (labels it Pod Security %s, and keeps it on uninstall). Create a namespace of its own (kubectl create namespace kafka-bot) and install with --namespace kafka-bot. Nothing was installed" $ns .Values.namespace.podSecurityEnforce) -}}
{{- end -}}
{{- $others := list -}}
{{- range $kind := list (list "v1" "Pod") (list "apps/v1" "Deployment") (list "apps/v1" "StatefulSet") (list "apps/v1" "DaemonSet") (list "apps/v1" "ReplicaSet") (list "batch/v1" "Job") (list "batch/v1" "CronJob") -}}
{{- range (lookup (index $kind 0) (index $kind 1) $ns "").items -}}
{{- $labels := .metadata.labels | default dict -}}
{{- if ne (get $labels "app.kubernetes.io/instance") $.Release.Name -}}
{{- $others = append $others (printf "%s/%s" (index $kind 1) .metadata.name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $others -}}
{{- fail (printf "refusing to install into namespace %q: it holds workloads of others (%s). The chart takes its namespace over (labels it Pod Security %s, and keeps it on uninstall): give the bot a namespace of its own (kubectl create namespace kafka-bot, --namespace kafka-bot). Nothing was installed" $ns (join ", " (slice $others 0 (min 3 (len $others)))) .Values.namespace.podSecurityEnforce) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.image.digest) (not .Values.image.allowMutableTag) -}}
{{- fail (printf "image.digest is required to install: this chart (from a checkout, not a release) names the image by its version tag %s. Install the released chart (its digest is pinned), or set image.digest to the digest the image build printed. Nothing was installed" (include "kafkabot.image" .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kafkabot.clustersFile: the CLUSTERS_FILE the chart writes from values
clusters (internal/fleet reads it): each cluster's kubeconfig is mounted from
its Secret at /etc/kafkabot/clusters/<name>/kubeconfig.
*/}}
{{- define "kafkabot.clustersFile" -}}
{{- $list := list -}}
{{- range .Values.clusters -}}
{{- $c := dict "name" .name -}}
{{- if .kubeconfigSecret -}}
{{- $_ := set $c "kubeconfig" (printf "/etc/kafkabot/clusters/%s/kubeconfig" .name) -}}
{{- end -}}
{{- with .context -}}{{- $_ := set $c "context" . -}}{{- end -}}
{{- with .kafkaNamespaces -}}{{- $_ := set $c "kafkaNamespaces" . -}}{{- end -}}
{{- with .approvalChannels -}}{{- $_ := set $c "approvalChannels" . -}}{{- end -}}
{{- with .approvers -}}{{- $_ := set $c "approvers" . -}}{{- end -}}
{{- with .kafka -}}{{- $_ := set $c "kafka" . -}}{{- end -}}
{{- $list = append $list $c -}}
{{- end -}}
{{- toYaml (dict "clusters" $list) -}}
{{- end -}}

{{/*
kafkabot.validate: checks that need more than the schema. Included once, by
the ConfigMap, so every check runs on every render.
*/}}
{{- define "kafkabot.validate" -}}
{{- $ := . -}}
{{- include "kafkabot.installChecks" . -}}
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
{{- if and .Values.clusters .Values.kafka.bootstrap -}}
{{- fail "kafka.bootstrap is for the cluster the bot runs in, without clusters: with clusters, give each entry its own kafka list (clusters[].kafka)" -}}
{{- end -}}
{{- if and .Values.kafka.secret (not .Values.kafka.bootstrap) -}}
{{- fail "kafka.secret is read only for kafka.bootstrap's brokers: set kafka.bootstrap too, or drop the secret" -}}
{{- end -}}
{{- if and .Values.kafka.secret (not .Values.kafka.tls) (not .Values.kafka.saslMechanism) -}}
{{- fail "kafka.secret without kafka.tls or kafka.saslMechanism is never read: set kafka.saslMechanism (the Secret's username and password) or kafka.tls (its ca.crt)" -}}
{{- end -}}
{{- if and .Values.kafka.saslMechanism (not .Values.kafka.secret) -}}
{{- fail (printf "kafka.saslMechanism %s needs kafka.secret, the Secret holding the username and password" .Values.kafka.saslMechanism) -}}
{{- end -}}
{{- $clusterNames := dict -}}
{{- range .Values.clusters -}}
{{- if hasKey $clusterNames .name -}}
{{- fail (printf "clusters lists %q twice" .name) -}}
{{- end -}}
{{- $_ := set $clusterNames .name true -}}
{{- end -}}
{{- range $k, $_ := .Values.extraConfig -}}
{{- if has $k (list "SLACK_APP_TOKEN" "SLACK_BOT_TOKEN" "APPROVAL_SECRET" "ALERTMANAGER_TOKEN") -}}
{{- fail (printf "extraConfig.%s is a secret: a ConfigMap is readable by anyone who may read ConfigMaps; put it in the Secret (existingSecret or secret.values)" $k) -}}
{{- end -}}
{{- if has $k (list "KAFKA_NAMESPACES" "KAFKA_POD_SELECTOR" "CLUSTER_NAME" "ALERT_CHANNEL" "APPROVERS" "APPROVAL_CHANNELS" "SWEEP_SCHEDULE" "LOG_LEVEL" "LOG_FORMAT" "ALLOW_ROOT_BROKER" "POD_NAMESPACE" "POD_NAME" "CLUSTERS_FILE" "KAFKA_BOOTSTRAP" "KAFKA_TLS" "KAFKA_SASL_MECHANISM" "KAFKA_SECRET") -}}
{{- fail (printf "extraConfig.%s has a value of its own in values.yaml (or is set by the chart): set that instead" $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kafkabot.kafkaSecrets: the Secrets holding Kafka credentials, comma-separated,
once each, sorted: kafka.secret and every clusters[].kafka[].secret.name.
Each is mounted read-only at /etc/kafkabot/kafka/<name>
(internal/serve.KafkaSecretsDir), where the repair gates read it.
*/}}
{{- define "kafkabot.kafkaSecrets" -}}
{{- $names := list -}}
{{- with .Values.kafka.secret -}}{{- $names = append $names . -}}{{- end -}}
{{- range .Values.clusters -}}
{{- range .kafka -}}
{{- with .secret -}}{{- $names = append $names .name -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $names | uniq | sortAlpha | join "," -}}
{{- end -}}

{{/*
kafkabot.volumeMounts and kafkabot.volumes: what the bot's container mounts,
the same in the Deployment and in the helm test pod (bot doctor reads the
same files): the short-lived ServiceAccount token; with clusters, the
CLUSTERS_FILE and each cluster's kubeconfig Secret; each Kafka credentials
Secret (kafkabot.kafkaSecrets). Every mount is read-only.
*/}}
{{- define "kafkabot.volumeMounts" -}}
- name: kube-api-access
  mountPath: /var/run/secrets/kubernetes.io/serviceaccount
  readOnly: true
{{- if .Values.clusters }}
- name: clusters
  mountPath: /etc/kafkabot/clusters.yaml
  subPath: clusters.yaml
  readOnly: true
{{- range .Values.clusters }}
{{- if .kubeconfigSecret }}
- name: cluster-{{ .name }}
  mountPath: /etc/kafkabot/clusters/{{ .name }}
  readOnly: true
{{- end }}
{{- end }}
{{- end }}
{{- range $i, $name := include "kafkabot.kafkaSecrets" . | splitList "," | compact }}
- name: kafka-secret-{{ $i }}
  mountPath: /etc/kafkabot/kafka/{{ $name }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "kafkabot.volumes" -}}
- name: kube-api-access
  projected:
    sources:
      - serviceAccountToken:
          path: token
          expirationSeconds: 3600
      - configMap:
          name: kube-root-ca.crt
          items:
            - key: ca.crt
              path: ca.crt
      - downwardAPI:
          items:
            - path: namespace
              fieldRef:
                fieldPath: metadata.namespace
{{- if .Values.clusters }}
- name: clusters
  configMap:
    name: {{ include "kafkabot.fullname" . }}-clusters
{{- range .Values.clusters }}
{{- if .kubeconfigSecret }}
- name: cluster-{{ .name }}
  secret:
    secretName: {{ .kubeconfigSecret }}
    items:
      - key: {{ .kubeconfigKey | default "kubeconfig" }}
        path: kubeconfig
{{- end }}
{{- end }}
{{- end }}
{{- range $i, $name := include "kafkabot.kafkaSecrets" . | splitList "," | compact }}
- name: kafka-secret-{{ $i }}
  secret:
    secretName: {{ $name }}
{{- end }}
{{- end -}}
