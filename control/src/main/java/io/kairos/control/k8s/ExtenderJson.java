package io.kairos.control.k8s;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The extender's JSON. Like the API's: unknown envelope fields, wrong types and trailing garbage
 * are errors that name the field. Unlike it: keys match case-insensitively (Go's decoder does, and
 * kube-scheduler sends Go field names), and the Kubernetes objects inside ignore fields they do not
 * declare (see {@link KubeObjects}). Limits are larger: a filter over 5,000 full node objects is a
 * few megabytes.
 */
public final class ExtenderJson {
  public static final ObjectMapper MAPPER =
      JsonMapper.builder(
              JsonFactory.builder()
                  .streamReadConstraints(
                      StreamReadConstraints.builder()
                          .maxNestingDepth(128)
                          .maxStringLength(1 << 20)
                          .maxNumberLength(40)
                          .build())
                  .build())
          .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .build();

  private ExtenderJson() {}
}
