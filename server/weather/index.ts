export { type CalendarDate, type SunTimes, solarDateAt, sunTimesAt, sunTimesForDate } from "./sun.ts";
export { describeWeatherCode } from "./weather-codes.ts";
export {
  createWeatherService,
  type FetchLike,
  WeatherConfigError,
  WeatherDefaults,
  type WeatherService,
  type WeatherServiceOptions,
  weatherOptionsFromEnv,
} from "./weather-service.ts";
