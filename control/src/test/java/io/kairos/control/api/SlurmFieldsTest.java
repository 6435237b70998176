package io.kairos.control.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.config.SlurmNames;
import io.kairos.config.Tenancy;
import io.kairos.core.fairshare.AccountTree;
import io.kairos.core.tenancy.CohortSpec;
import io.kairos.core.tenancy.PreemptionPolicy;
import io.kairos.core.tenancy.PriorityClass;
import io.kairos.core.tenancy.QueueDefaults;
import io.kairos.core.tenancy.QueueSpec;
import io.kairos.core.tenancy.Resource;
import io.kairos.core.tenancy.ResourceQuota;
import io.kairos.core.tenancy.TenancyConfig;
import io.kairos.core.tenancy.Tenants;
import io.kairos.protocol.JobSubmission;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Slurm's names as a site writes them, turned into Kairos' fields at submission: partitions in any
 * case (or mapped to a queue), GPU types through the site's aliases, a QOS that names a priority
 * class (in any case) or else a warning, unless the site makes it an error; node counts; the
 * script's checks.
 */
class SlurmFieldsTest {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private static final Map<Resource, ResourceQuota> QUOTA =
      Map.of(Resource.gpu("H100"), ResourceQuota.of(2));

  /** Queues a and b, priority classes high and low. */
  private static final Tenancy TENANCY =
      new Tenancy(
          new TenancyConfig(
              List.of(new PriorityClass("high", 1000, false), new PriorityClass("low", 10, true)),
              List.of(new CohortSpec("lab")),
              List.of(
                  new QueueSpec("a", "lab", QUOTA, PreemptionPolicy.NONE, QueueDefaults.NONE),
                  new QueueSpec("b", "lab", QUOTA, PreemptionPolicy.NONE, QueueDefaults.NONE))),
          AccountTree.of(List.of()),
          3600,
          Tenants.Settings.DEFAULT);

  private static final SlurmNames SITE =
      new SlurmNames(Map.of("Ampere", "NVIDIA A100-SXM4-80GB"), Map.of("Hopper-Prod", "b"), false);
  private static final SlurmNames STRICT = new SlurmNames(Map.of(), Map.of(), true);

  static JobSubmission job(String fields) throws Exception {
    return JSON.readValue(
        "{\"command\":[\"job.sh\"]" + (fields.isEmpty() ? "" : "," + fields) + "}",
        JobSubmission.class);
  }

  static SlurmFields.Applied apply(String fields, SlurmNames names, Tenancy tenancy)
      throws Exception {
    return SlurmFields.apply(job(fields), names, tenancy, "");
  }

  @Test
  void aPartitionIsItsQueueInAnyCaseOrTheSitesMapping() throws Exception {
    assertThat(apply("\"queue\":\"B\"", SITE, TENANCY).submission().queue()).isEqualTo("b");
    assertThat(apply("\"queue\":\"b\"", SITE, TENANCY).submission().queue()).isEqualTo("b");
    assertThat(apply("\"queue\":\"HOPPER-prod\"", SITE, TENANCY).submission().queue())
        .isEqualTo("b");
    // Unknown: in lower case, for the tenancy to refuse with its list of queues.
    assertThat(apply("\"queue\":\"Defq\"", SITE, TENANCY).submission().queue()).isEqualTo("defq");
    // Without a tenancy, a queue is a name only, and queue names are lower case.
    assertThat(apply("\"queue\":\"Defq\"", SITE, null).submission().queue()).isEqualTo("defq");
  }

  @Test
  void aGpuTypeIsTheSitesAliasInAnyCaseElseAsWritten() throws Exception {
    assertThat(apply("\"gpuModel\":\"AMPERE\"", SITE, null).submission().gpuModel())
        .isEqualTo("NVIDIA A100-SXM4-80GB");
    // Not an alias: the controller matches it to the nodes' models by its key (a100 = A100-SXM4).
    assertThat(apply("\"gpuModel\":\"a100\"", SITE, null).submission().gpuModel())
        .isEqualTo("a100");
  }

  @Test
  void aQosThatNamesAPriorityClassIsThatClass() throws Exception {
    var applied = apply("\"queue\":\"b\",\"qos\":\"HIGH\"", SITE, TENANCY);

    assertThat(applied.submission().priorityClass()).isEqualTo("high");
    assertThat(applied.submission().qos()).isNull();
    assertThat(applied.warnings()).isEmpty();
  }

  @Test
  void anUnknownQosIsAWarningAndTheJobRunsWithoutOne() throws Exception {
    var withTenancy = apply("\"queue\":\"b\",\"qos\":\"normal\"", SITE, TENANCY);
    var without = apply("\"qos\":\"normal\"", SITE, null);

    assertThat(withTenancy.submission().priorityClass()).isNull();
    assertThat(withTenancy.warnings())
        .containsExactly(
            "--qos=normal was ignored: its priority classes are high, low (the job runs without"
                + " one)");
    assertThat(without.warnings())
        .containsExactly(
            "--qos=normal was ignored: this controller has no priority classes (the job runs"
                + " without one)");
  }

  @Test
  void aStrictSiteRefusesAnUnknownQosNamingTheField() {
    assertThatThrownBy(() -> apply("\"queue\":\"b\",\"qos\":\"normal\"", STRICT, TENANCY))
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.field()).isEqualTo("qos");
              assertThat(e.getMessage()).contains("high, low");
            });
  }

  @Test
  void aPriorityClassGivenWinsOverTheQos() throws Exception {
    var applied =
        apply("\"queue\":\"b\",\"priorityClass\":\"low\",\"qos\":\"zzz\"", STRICT, TENANCY);

    assertThat(applied.submission().priorityClass()).isEqualTo("low");
    assertThat(applied.warnings()).isEmpty();
  }

  @Test
  void nodesSpreadGpusEvenlyOrAJobWithoutGpus() throws Exception {
    var gpus = apply("\"gpus\":8,\"nodes\":2", SITE, null).submission();
    var cpuOnly = apply("\"cpus\":4,\"nodes\":2", SITE, null).submission();

    assertThat(gpus.gpusPerNode()).isEqualTo(4);
    assertThat(gpus.nodes()).isNull();
    assertThat(cpuOnly.nodes()).isEqualTo(2);
    assertThat(cpuOnly.gpusPerNode()).isNull();
  }

  @Test
  void aScriptMustStartWithAnInterpreterLine() {
    assertThatThrownBy(() -> apply("\"script\":\"echo hi\"", SITE, null))
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.field()).isEqualTo("script");
              assertThat(e.fix()).contains("#!/bin/bash");
            });
  }
}
