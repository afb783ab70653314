/// An App Store Server API error answer: an HTTP status and Apple's body
/// `{"errorCode": N, "errorMessage": "..."}`.
///
/// Codes are Apple's (app-store-server-library-swift's `APIError`). Where Apple documents an
/// error without publishing its number (the consumption checks of API 1.19), the simulator
/// answers 4000000 and names Apple's error in the message.
/// See https://developer.apple.com/documentation/appstoreserverapi/error-codes
struct ServerAPIError: Error, Sendable, Hashable {
    var status: Int
    var code: Int64
    var message: String

    init(status: Int, code: Int64, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static let generalBadRequest = ServerAPIError(status: 400, code: 4_000_000, "Bad request.")
    static let invalidRequestRevision = ServerAPIError(
        status: 400, code: 4_000_005, "Invalid request revision.")
    static let invalidTransactionId = ServerAPIError(status: 400, code: 4_000_006, "Invalid transaction id.")
    static let invalidOriginalTransactionId = ServerAPIError(
        status: 400, code: 4_000_008, "Invalid original transaction id.")
    static let invalidExtendByDays = ServerAPIError(
        status: 400, code: 4_000_009, "Invalid extend by days value. Extend by days is 1 to 90.")
    static let invalidExtendReasonCode = ServerAPIError(
        status: 400, code: 4_000_010, "Invalid extend reason code. The reason code is 0, 1, 2 or 3.")
    static let invalidRequestIdentifier = ServerAPIError(
        status: 400, code: 4_000_011, "Invalid request identifier. It is 1 to 128 characters.")
    static let startDateAfterEndDate = ServerAPIError(
        status: 400, code: 4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.")
    static let invalidPaginationToken = ServerAPIError(
        status: 400, code: 4_000_014, "Invalid request. The pagination token is invalid.")
    static let invalidStartDate = ServerAPIError(
        status: 400, code: 4_000_015, "Invalid request. The start date is not a timestamp value in milliseconds.")
    static let invalidEndDate = ServerAPIError(
        status: 400, code: 4_000_016, "Invalid request. The end date is not a timestamp value in milliseconds.")
    static let invalidTestNotificationToken = ServerAPIError(
        status: 400, code: 4_000_020, "Invalid request. The test notification token is invalid.")
    static let invalidSort = ServerAPIError(status: 400, code: 4_000_021, "Invalid request. The sort parameter is invalid.")
    static let invalidProductType = ServerAPIError(
        status: 400, code: 4_000_022, "Invalid request. The product type parameter is invalid.")
    static let invalidProductId = ServerAPIError(
        status: 400, code: 4_000_023, "Invalid request. The product id parameter is invalid.")
    static let invalidInAppOwnershipType = ServerAPIError(
        status: 400, code: 4_000_026, "Invalid request. The in-app ownership type parameter is invalid.")
    static let invalidEmptyStorefrontCountryCodeList = ServerAPIError(
        status: 400, code: 4_000_027, "Invalid request. The storefront country code list is empty.")
    static let invalidStorefrontCountryCode = ServerAPIError(
        status: 400, code: 4_000_028, "Invalid request. A storefront country code is invalid.")
    static let invalidRevoked = ServerAPIError(
        status: 400, code: 4_000_030, "Invalid request. The revoked parameter is invalid.")
    static let invalidStatus = ServerAPIError(
        status: 400, code: 4_000_031, "Invalid request. The status parameter is invalid.")
    static let invalidCustomerConsented = ServerAPIError(
        status: 400, code: 4_000_035, "Invalid request. The customer consented field is invalid.")
    static let invalidDeliveryStatus = ServerAPIError(
        status: 400, code: 4_000_036, "Invalid request. The delivery status field is invalid.")
    static let invalidSampleContentProvided = ServerAPIError(
        status: 400, code: 4_000_041, "Invalid request. The sample content provided field is invalid.")
    static let consumptionPercentageOutOfRange = ServerAPIError(
        status: 400, code: 4_000_000, "ConsumptionPercentageOutOfRangeError: consumptionPercentage is 0...100000.")
    static let consumptionPercentageAutoRenewable = ServerAPIError(
        status: 400, code: 4_000_000,
        "ConsumptionPercentageAutoRenewableSubscriptionError: no consumptionPercentage for auto-renewable subscriptions.")
    static let undeliveredConsumptionPercentageNonZero = ServerAPIError(
        status: 400, code: 4_000_000,
        "UndeliveredConsumptionPercentageNonZeroError: consumptionPercentage must be 0 when not delivered.")
    static let invalidRefundPreference = ServerAPIError(
        status: 400, code: 4_000_000, "Invalid request. The refund preference field is invalid.")
    static let grantProratedWithoutPercentage = ServerAPIError(
        status: 400, code: 4_000_000, "Invalid request. GRANT_PRORATED needs a consumptionPercentage above 0.")
    static let invalidAppAccountTokenUUID = ServerAPIError(
        status: 400, code: 4_000_183, "Invalid request. The app account token field must be a valid UUID.")
    static let transactionIdNotOriginalTransactionId = ServerAPIError(
        status: 400, code: 4_000_187, "Invalid request. The transaction id is not an original transaction id.")
    // Refusals of a renewal-date extension are 403s: the request is well formed, the
    // subscription does not qualify.
    static let subscriptionExtensionIneligible = ServerAPIError(
        status: 403, code: 4_030_004,
        "Forbidden - subscription state ineligible for extension. It is expired, in billing retry or in a free offer period.")
    static let subscriptionMaxExtension = ServerAPIError(
        status: 403, code: 4_030_005, "Forbidden - subscription has reached maximum extension count.")
    static let originalTransactionIdNotFound = ServerAPIError(
        status: 404, code: 4_040_005, "Original transaction id not found.")
    static let testNotificationNotFound = ServerAPIError(
        status: 404, code: 4_040_008, "Test notification not found.")
    static let statusRequestNotFound = ServerAPIError(
        status: 404, code: 4_040_009, "The server didn't find a subscription-renewal-date extension request for this requestIdentifier and productId.")
    static let transactionIdNotFound = ServerAPIError(status: 404, code: 4_040_010, "Transaction id not found.")
    static let rateLimitExceeded = ServerAPIError(status: 429, code: 4_290_000, "Rate limit exceeded.")
    static let generalInternal = ServerAPIError(status: 500, code: 5_000_000, "An unknown error occurred.")
}
