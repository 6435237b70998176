package io.kairos.sim;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How right the predicted start times were ({@code --predictions}; see {@link StartPredictions}):
 * absolute errors, in seconds, of the forecast users are shown and of the naive baseline "now plus
 * the mean wait so far", over the same predictions (at each job's arrival and at each hour of its
 * wait).
 *
 * @param predictions how many predictions were scored
 * @param p50ErrorSec median absolute error of the forecast
 * @param p90ErrorSec 90th percentile absolute error of the forecast
 * @param within10Min share of forecasts within 10 minutes of the real start
 * @param within1Hour share within an hour
 * @param baselineP50ErrorSec the baseline's median absolute error
 * @param baselineP90ErrorSec the baseline's 90th percentile
 * @param baselineWithin10Min the baseline's share within 10 minutes
 * @param baselineWithin1Hour the baseline's share within an hour
 */
public record PredictionReport(
    long predictions,
    long p50ErrorSec,
    long p90ErrorSec,
    double within10Min,
    double within1Hour,
    long baselineP50ErrorSec,
    long baselineP90ErrorSec,
    double baselineWithin10Min,
    double baselineWithin1Hour) {

  /** The figures as the report's JSON fields, in a fixed order. */
  public Map<String, Object> toMap() {
    var m = new LinkedHashMap<String, Object>();
    m.put("predictions_scored", predictions);
    m.put("prediction_p50_error_s", p50ErrorSec);
    m.put("prediction_p90_error_s", p90ErrorSec);
    m.put("prediction_within_10_min", SimReport.round(within10Min));
    m.put("prediction_within_1_h", SimReport.round(within1Hour));
    m.put("naive_p50_error_s", baselineP50ErrorSec);
    m.put("naive_p90_error_s", baselineP90ErrorSec);
    m.put("naive_within_10_min", SimReport.round(baselineWithin10Min));
    m.put("naive_within_1_h", SimReport.round(baselineWithin1Hour));
    return m;
  }
}
