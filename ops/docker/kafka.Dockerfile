# Apache Kafka for docker-compose.yml and the testcontainers backend, without a
# registry: Debian's JRE on the debootstrap base, plus the broker jars that
# ops/kafka/fetch resolves from Maven Central (the ones ./ops/test runs).
# ops/docker/images builds it with a context of its own: this file,
# kafka-entrypoint and libs/ (those jars).
#
# One KRaft node (broker and controller) configured from KAFKA_* variables, as
# the apache/kafka image is: KAFKA_NODE_ID=1 -> node.id=1 (an underscore is a
# dot, `__` an underscore, `___` a dash). CLUSTER_ID formats the data directory
# (KAFKA_LOG_DIRS) on the first start; later starts find it formatted.
ARG BASE=draplane-base:local
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY libs/ /opt/kafka/libs/
COPY kafka-entrypoint /opt/kafka/entrypoint
RUN useradd --system --uid 1000 --user-group --home-dir /var/lib/kafka --create-home kafka \
    && mkdir -p /var/lib/kafka/data /etc/kafka \
    && chown kafka:kafka /var/lib/kafka/data /etc/kafka
USER kafka
WORKDIR /var/lib/kafka
EXPOSE 9092
ENTRYPOINT ["/opt/kafka/entrypoint"]
